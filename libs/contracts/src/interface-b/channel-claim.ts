/**
 * The channel claim (service-spec.md 2.B): what a client may do in one channel. Used inside claims
 * payloads, client tokens (`channels`) and the interface A client-in-channel patch, so it lives in
 * its own module with no dependency on the rest of the catalog.
 *
 * Every field is optional (a claim usually names a channel and a few restrictions); `id` is the
 * channel id and may be null, the other fields have the non-null types of the spec table.
 */
import { Type, type Static } from '@sinclair/typebox';
import { OptionalNullable, ShortText, ShortTextList, record } from '../interface-a/record-schema.js';

const flag = (description: string) => Type.Optional(Type.Boolean({ description }));

export const ChannelClaim = record(
  'ChannelClaim',
  {
    id: OptionalNullable(ShortText(), { description: 'Channel id the claim applies to.' }),
    allowedLayoutZones: Type.Optional(ShortTextList({ description: 'Layout zones the client may use.' })),
    allowedLayoutPriority: Type.Optional(Type.Number({ description: 'Highest layout priority the client may use.' })),
    broadcast: flag('The client joins as a broadcaster.'),
    disableSendMessage: flag('The client may not send messages.'),
    disablePeer: flag('The client may not open peer connections.'),
    disableSfu: flag('The client may not open SFU connections.'),
    disableMcu: flag('The client may not open MCU connections.'),
    disableSendAudio: flag('The client may not send audio.'),
    disableSendVideo: flag('The client may not send video.'),
    disableSendData: flag('The client may not send data.'),
    disableRemoteClientEvents: flag('The client receives no events about other clients.'),
    disableRemoteUpstreamConnectionEvents: flag('The client receives no events about remote upstream connections.'),
    audioReceiveWhitelist: Type.Optional(ShortTextList({ description: 'Only audio from these ids is received.' })),
    videoReceiveWhitelist: Type.Optional(ShortTextList({ description: 'Only video from these ids is received.' })),
    dataReceiveWhitelist: Type.Optional(ShortTextList({ description: 'Only data from these ids is received.' })),
    action: Type.Optional(ShortText()),
    canUpdate: flag('The client may update the channel.'),
    canUpdateLayout: flag('The client may update the layout.'),
    canKick: flag('The client may kick others.'),
    enableHiddenObserverMode: flag('The client is invisible to the other clients.'),
  },
  'Permissions of a client in one channel.',
);
export type ChannelClaim = Static<typeof ChannelClaim>;
