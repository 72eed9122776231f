import { Body, Injectable, Param, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { DomainError, isUuid, malformedText, validator, type Validator } from '@switchboard/contracts';
import type { Static, TSchema } from '@sinclair/typebox';

/** Longest entity id accepted in a path (the ids of the runtime contract are bounded the same way). */
export const MAX_ID_LENGTH = 256;

function invalidParam(name: string, message: string): DomainError {
  return new DomainError('ValidationFailed', `The path parameter ${name} is invalid.`, [{ field: name, message }]);
}

/**
 * A path id: non-empty, at most MAX_ID_LENGTH characters, well-formed, no control characters. 400 naming the parameter
 * otherwise.
 */
export function checkId(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidParam(name, 'must not be empty');
  if (value.length > MAX_ID_LENGTH) throw invalidParam(name, `must be at most ${MAX_ID_LENGTH} characters`);
  const malformed = malformedText(value);
  if (malformed) throw invalidParam(name, malformed);
  if (hasControlCharacter(value)) throw invalidParam(name, 'must not contain control characters');
  return value;
}

/** C0 control characters and DEL: never part of an id (a decoded path may carry them). */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x1f || code === 0x7f) return true;
  }
  return false;
}

/** Every path parameter of the route, each checked as an entity id (`checkId`), as one object. */
@Injectable()
export class IdsPipe implements PipeTransform<unknown, Record<string, string>> {
  transform(value: unknown): Record<string, string> {
    const ids: Record<string, string> = {};
    for (const [name, id] of Object.entries((value ?? {}) as Record<string, unknown>)) ids[name] = checkId(name, id);
    return ids;
  }
}

/** A path uuid (`{ms}`, `{r}`, `{cr}` of the contract), lower-cased. 400 naming the parameter otherwise. */
export function checkUuid(name: string, value: unknown): string {
  if (typeof value !== 'string' || !isUuid(value)) throw invalidParam(name, 'must be a UUID');
  return value.toLowerCase();
}

@Injectable()
class UuidPipe implements PipeTransform<unknown, string> {
  transform(value: unknown, metadata: ArgumentMetadata): string {
    return checkUuid(metadata.data ?? 'id', value);
  }
}

/**
 * `@Ids() ids: ChannelRef`: the route's path ids (`applicationId`, `channelId`, …), validated, as the
 * object a runtime query or command target takes (the contracts' id chain, `AppRef` … `ConnectionRef`).
 */
export const Ids = () => Param(IdsPipe);
export const UuidParam = (name: string) => Param(name, UuidPipe);

/** Validates a JSON body against a contract schema: unknown fields and wrong types are 400s naming each field. */
export class BodyPipe<T extends TSchema> implements PipeTransform<unknown, Static<T>> {
  private readonly check: Validator<T>;
  constructor(schema: T) {
    this.check = validator(schema);
  }
  transform(value: unknown): Static<T> {
    if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new DomainError('ValidationFailed', 'The request body must be a JSON object.', [
        { message: 'expected a JSON object body' },
      ]);
    }
    return this.check.parse(value);
  }
}

export const ValidBody = <T extends TSchema>(schema: T) => Body(new BodyPipe(schema));

/** Query parameters: an optional integer within bounds (400 naming the parameter otherwise). */
export function optionalInt(name: string, raw: unknown, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw))
    throw new DomainError('ValidationFailed', `The query parameter ${name} is invalid.`, [
      { field: name, message: 'must be an integer' },
    ]);
  const value = Number(raw);
  if (value < min || value > max)
    throw new DomainError('ValidationFailed', `The query parameter ${name} is invalid.`, [
      { field: name, message: `must be between ${min} and ${max}` },
    ]);
  return value;
}
