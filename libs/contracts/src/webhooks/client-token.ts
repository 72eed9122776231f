/**
 * Payload of a client token (http-contract.md, "Client edge"): a JWT-shaped HS256 string whose
 * payload has the keys below. `iat`/`exp` are Unix seconds. `register` tokens identify a client;
 * `join` tokens also carry the channel claims of the channels it may join (whether `channels` is
 * required for a join is checked by the edge, not by this shape). The payload is open: a token
 * minted elsewhere may carry claims of its own, which are ignored (`nbf` is honoured).
 */
import { Type, type Static } from '@sinclair/typebox';
import { ChannelClaim } from '../interface-b/channel-claim.js';
import { Int64, OptionalNullable, StringEnum, StringList, record } from '../interface-a/record-schema.js';

export const CLIENT_TOKEN_TYPES = ['register', 'join'] as const;
export const ClientTokenType = StringEnum(CLIENT_TOKEN_TYPES, { description: '`register` or `join`.' });
export type ClientTokenType = Static<typeof ClientTokenType>;

export const ClientTokenPayload = record(
  'ClientTokenPayload',
  {
    iat: Int64({ minimum: 0, description: 'Issued at, Unix seconds.' }),
    exp: Int64({ minimum: 0, description: 'Expires at, Unix seconds.' }),
    type: ClientTokenType,
    applicationId: Type.String({ minLength: 1 }),
    userId: OptionalNullable(Type.String()),
    deviceId: OptionalNullable(Type.String()),
    clientId: OptionalNullable(Type.String()),
    clientRoles: OptionalNullable(StringList()),
    channels: OptionalNullable(Type.Array(ChannelClaim), { description: 'Channel claims.' }),
    nbf: Type.Optional(
      Int64({ minimum: 0, description: 'Not before, Unix seconds (optional; honoured when present).' }),
    ),
  },
  'Payload of a client token. Other claims (`iss`, `jti`, ...) are ignored, as RFC 7519 asks of claims an implementation does not use.',
  { additionalProperties: true },
);
export type ClientTokenPayload = Static<typeof ClientTokenPayload>;
