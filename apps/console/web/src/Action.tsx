import { useId, useRef, useState } from 'react';

interface Props {
  label: string;
  /** What the confirmation dialog asks, naming the target. */
  question: string;
  /** Asks for a message text in the dialog and hands it to `run`. */
  withMessage?: boolean;
  /** Asks for another value instead (its label and input type, e.g. a date), handed to `run`. */
  input?: { label: string; type: 'datetime-local' | 'text' };
  danger?: boolean;
  run: (message: string) => Promise<unknown>;
  onDone?: () => void;
}

/** An operator action: a button, a modal confirmation (native dialog: focus trapped, Escape cancels), the outcome. */
export function Action({ label, question, withMessage, input, danger, run, onDone }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [message, setMessage] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  const confirm = async () => {
    setBusy(true);
    try {
      await run(message);
      setOutcome({ ok: true, text: `${label}: done` });
      dialog.current?.close();
      setMessage('');
      onDone?.();
    } catch (failure) {
      setOutcome({
        ok: false,
        text: `${label} failed: ${failure instanceof Error ? failure.message : String(failure)}`,
      });
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button type="button" className={danger ? 'danger' : undefined} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            void confirm();
          }}
        >
          <p id={titleId}>{question}</p>
          {withMessage && (
            <label>
              Message
              <textarea required value={message} onChange={(event) => setMessage(event.target.value)} />
            </label>
          )}
          {input && (
            <label>
              {input.label}
              <input type={input.type} required value={message} onChange={(event) => setMessage(event.target.value)} />
            </label>
          )}
          {outcome && !outcome.ok && <p role="alert">{outcome.text}</p>}
          <div className="buttons">
            <button type="submit" disabled={busy} className={danger ? 'danger' : undefined}>
              Confirm
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
          </div>
        </form>
      </dialog>
      {outcome?.ok && (
        <span role="status" className="outcome">
          {outcome.text}
        </span>
      )}
    </span>
  );
}
