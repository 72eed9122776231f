import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { DomainError, findMalformedText, malformedText } from '@switchboard/contracts';

/** Longest id accepted in a path (interface A bounds its path ids the same way). */
export const MAX_PATH_ID_LENGTH = 256;

/**
 * Every path and query parameter of interface B, before any handler: a NUL or lone surrogate
 * (PostgreSQL refuses both, a 500 otherwise) or an over-long path id is a 400 naming the parameter.
 * Bodies are checked by their contract validator (common/bodies.ts).
 */
@Injectable()
export class RequestTextPipe implements PipeTransform<unknown, unknown> {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param') checkPathParams(metadata.data, value);
    else if (metadata.type === 'query') checkQueryParams(metadata.data, value);
    return value;
  }
}

function checkPathParams(name: string | undefined, value: unknown): void {
  const params = name === undefined ? ((value ?? {}) as Record<string, unknown>) : { [name]: value };
  for (const [param, text] of Object.entries(params)) {
    if (typeof text !== 'string') continue;
    const problem =
      text.length > MAX_PATH_ID_LENGTH ? `must be at most ${MAX_PATH_ID_LENGTH} characters` : malformedText(text);
    if (problem) throw invalidParameter('path', param, problem);
  }
}

function checkQueryParams(name: string | undefined, value: unknown): void {
  const found = findMalformedText(name === undefined ? value : { [name]: value });
  if (!found) return;
  // `$filter[1]` (a repeated parameter) is named `$filter`; a bad parameter name has no name to give.
  const param = found.field.replace(/\[\d+\]$/, '');
  if (param) throw invalidParameter('query', param, found.message);
  throw new DomainError('ValidationFailed', 'A query parameter name contains U+0000 (NUL) or a lone surrogate.', [
    { message: found.message },
  ]);
}

function invalidParameter(where: 'path' | 'query', name: string, message: string): DomainError {
  return new DomainError(
    'ValidationFailed',
    `The ${where} parameter ${name} ${message}.`,
    [{ field: name, message }],
    name,
  );
}
