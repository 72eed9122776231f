import { Action } from './Action';
import { api } from './api';

interface Props {
  /** The interface A path of the level (channel, user, device, client or connection in a channel). */
  path: string;
  /** How the dialogs name the target, e.g. `user bob`. */
  target: string;
  /** Whether the level takes a server message (a connection does not). */
  messages?: boolean;
  onDone: () => void;
}

interface Toggle {
  label: string;
  question: string;
  body: Record<string, boolean>;
}

const toggles = (target: string): Toggle[] => [
  { label: 'Mute audio', question: `Mute the audio of ${target}?`, body: { audioMuted: true } },
  { label: 'Unmute audio', question: `Unmute the audio of ${target}?`, body: { audioMuted: false } },
  { label: 'Mute video', question: `Mute the video of ${target}?`, body: { videoMuted: true } },
  { label: 'Unmute video', question: `Unmute the video of ${target}?`, body: { videoMuted: false } },
  {
    label: 'Disable unmuting',
    question: `Stop ${target} from unmuting audio and video?`,
    body: { audioUnmuteDisabled: true, videoUnmuteDisabled: true },
  },
  {
    label: 'Allow unmuting',
    question: `Let ${target} unmute audio and video again?`,
    body: { audioUnmuteDisabled: false, videoUnmuteDisabled: false },
  },
  { label: 'Start recording', question: `Start recording ${target}?`, body: { recording: true } },
  { label: 'Stop recording', question: `Stop recording ${target}?`, body: { recording: false } },
];

/** The operator actions of one level: mute, unmute-disabled and recording (PATCH), message, kick (DELETE). */
export function LevelActions({ path, target, messages = true, onDone }: Props) {
  return (
    <div className="actions" role="group" aria-label={`Actions on ${target}`}>
      {toggles(target).map((toggle) => (
        <Action
          key={toggle.label}
          label={toggle.label}
          question={toggle.question}
          run={() => api('PATCH', path, toggle.body)}
          onDone={onDone}
        />
      ))}
      {messages && (
        <Action
          label="Send message"
          question={`Send a server message to ${target}:`}
          withMessage
          run={(message) => api('POST', `${path}/message`, { message })}
          onDone={onDone}
        />
      )}
      <Action label="Kick" danger question={`Kick ${target}?`} run={() => api('DELETE', path)} onDone={onDone} />
    </div>
  );
}
