/** Small HTTP helpers for end-to-end tests. */
export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function call<T = any>(
  method: string,
  url: string,
  options: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(15000) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Asserts the interface A error contract: problem+json with every RFC 9457 member, code and correlation id. */
export function expectProblem(answer: Answer, status: number, code: string) {
  expect({ status: answer.status, type: answer.headers.get('content-type') }).toEqual({
    status,
    type: expect.stringContaining('application/problem+json'),
  });
  expect(answer.body).toEqual(
    expect.objectContaining({
      type: expect.stringContaining('/problems/'),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      instance: expect.any(String),
      code,
      correlationId: answer.headers.get('x-correlation-id'),
    }),
  );
  expect(answer.text).not.toMatch(/\bat .*\.(js|ts):\d+|SELECT |INSERT /);
}

/** Asserts the interface B error contract. */
export function expectODataError(answer: Answer, status: number, code: string, target?: string | null) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({
    error: expect.objectContaining({
      code,
      message: expect.any(String),
      details: expect.any(Array),
      ...(target !== undefined ? { target } : {}),
    }),
  });
  expect(answer.text).not.toMatch(/\bat .*\.(js|ts):\d+|SELECT |INSERT /);
}
