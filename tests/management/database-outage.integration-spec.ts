/**
 * management-api while its PostgreSQL is down: a server of the test's own, crashed (immediate
 * shutdown) and started again. Meanwhile every request answers 503 `Unavailable` in the OData error
 * body with `Retry-After`, naming nothing internal (no driver message, address or SQL), instead of an
 * internal error;
 * once the server is back the service answers again without a restart, with every write it had
 * accepted.
 */
import { startOwnPostgres, waitFor, type OwnPostgres } from '@switchboard/testing';
import { expectODataError } from '../e2e/http.js';
import { startManagement, type Harness } from './support.js';

describe('management-api while its PostgreSQL is down', () => {
  let postgres: OwnPostgres | undefined;
  let h: Harness | undefined;

  beforeAll(async () => {
    postgres = await startOwnPostgres('management');
    h = await startManagement('pgdown', {}, { db: await postgres.createDatabase('management', ['management-api']) });
  }, 60000);

  afterAll(async () => {
    await h?.stop();
    await postgres?.stop();
  });

  it('answers 503 Unavailable while the database is down, then answers again with every write it accepted', async () => {
    const created = await h!.api('POST', '/ApplicationConfigs', { body: { applicationId: 'before-the-crash' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    await postgres!.crash();
    const answers = [
      await h!.api('GET', '/ApplicationConfigs'),
      await h!.api('GET', `/ApplicationConfigs/${id}`),
      await h!.api('POST', '/ApplicationConfigs', { body: { applicationId: 'during-the-outage' } }),
      await h!.api('GET', '/ChangeRecords?$top=5'),
    ];
    for (const answer of answers) {
      expectODataError(answer, 503, 'Unavailable', null);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.text).not.toMatch(/ECONN|127\.0\.0\.1|postgres|terminat/i);
    }

    await postgres!.start();
    await waitFor(async () => (await h!.api('GET', `/ApplicationConfigs/${id}`)).status === 200, {
      timeoutMs: 30000,
      intervalMs: 200,
      description: 'management-api to answer again',
    });
    expect((await h!.api('GET', `/ApplicationConfigs/${id}`)).body).toMatchObject({
      id,
      applicationId: 'before-the-crash',
    });
    expect((await h!.api('POST', '/ApplicationConfigs', { body: { applicationId: 'after-the-restart' } })).status).toBe(
      201,
    );
    // The request made during the outage changed nothing.
    const ids = (await h!.api('GET', '/ApplicationConfigs')).body.value
      .map((c: { applicationId: string }) => c.applicationId)
      .sort();
    expect(ids).toEqual(['after-the-restart', 'before-the-crash']);
  }, 90000);
});
