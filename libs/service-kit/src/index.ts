export * from './correlation.js';
export * from './logger.js';
export * from './health.js';
export * from './metrics.js';
export * from './ops-server.js';
export * from './nats.js';
export * from './nats-server.js';
export {
  coalesceWrites,
  REPLY_PART_HEADER,
  replyPacket,
  respondInParts,
  singleHeader,
  translateNatsError,
  type RawRequest,
  type ReplyMsg,
} from './nats-wire.js';
export * from './errors.js';
export * from './dependency-retry.js';
export * from './service.js';
export * from './openapi.js';
export * from './http-edge.js';
export * from './body-drain.js';
export * from './redis.js';
export * from './bearer.js';
export * from './event-stream.js';
export * from './event-consumer.js';
export * from './application-changes.js';
export * from './application-cache.js';
export * from './event-parking.js';
export * from './bull-connection.js';
