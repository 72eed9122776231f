/**
 * The hostile-input corpus (issue 20): every operation of interface A (gateway) and interface B
 * (management-api), enumerated from the OpenAPI documents they serve, and every /sync request type,
 * attacked with NUL, lone surrogates, bad percent encoding, overlong ids and strings, int64
 * overflow, broken bodies, oversized bodies, URLs and headers, and hostile OData options. Every
 * answer must be a documented 4xx (or /sync error frame or close), nothing a refused write asked
 * for may be stored or announced, and each service's peak resident memory must stay under its
 * Kubernetes limit. Figures go to .data/hostile-report.json.
 */
import {
  attackFraming,
  attackOperations,
  attackToleratedBodies,
  expectedCategories,
  readEveryList,
  type Interface,
} from './http-attack.js';
import { createFixtures, interfaceAIds, interfaceBIds, type Fixtures } from './fixtures.js';
import { ATTACKED_SERVICES, kubernetesMemoryLimits, startHostileStack, type HostileStack } from './stack.js';
import {
  attackInvalidUtf8,
  attackOversizedFrame,
  attackRegister,
  attackSession,
  type SyncOutcome,
} from './sync-attack.js';
import { operationsOf, type OpenApiDocument } from './corpus.js';
import { Tally, writeReport } from './tally.js';
import { closeAgent } from './wire.js';
import { SYNC_REQUEST_TYPES } from '@switchboard/contracts';

/**
 * What a refused write must leave as it was: interface B's record and change-log counts, interface A's snapshots, the
 * event streams.
 */
async function persistedState(stack: HostileStack, fixtures: Fixtures, interfaceA: Interface) {
  const counts: Record<string, unknown> = {};
  for (const set of [
    'ApiKeys',
    'ApplicationConfigs',
    'ChannelConfigs',
    'ApplicationWebhooks',
    'ChannelWebhooks',
    'PaymentMethods',
    'ChangeRecords',
    'Organizations',
  ]) {
    const res = await fetch(`${stack.managementUrl}/${set}?$count=true&$top=0`, {
      headers: { 'x-api-key': stack.operatorKey },
    });
    counts[set] = ((await res.json()) as Record<string, unknown>)['@odata.count'];
  }
  const application = `/admin/api/v1.0/applications/${encodeURIComponent(fixtures.applicationId)}`;
  const client = `${application}/users/${fixtures.userId}/devices/${fixtures.deviceId}/clients/${fixtures.clientId}`;
  for (const path of [
    application,
    `${application}/channels/${fixtures.channelId}`,
    `${application}/channels/${fixtures.channelId}/users/${fixtures.userId}/devices/${fixtures.deviceId}/clients/${fixtures.clientId}`,
    client,
  ]) {
    const res = await fetch(`${interfaceA.baseUrl}${path}`, { headers: { 'x-api-key': stack.operatorKey } });
    counts[path] = withoutClocks(await res.json());
  }
  return { counts, streams: await stack.streamMessages() };
}

/** Snapshots without the fields that move by themselves (timestamps, durations). */
function withoutClocks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutClocks);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !/(Timestamp|Time|Duration|On|At)$/.test(key))
      .map(([key, item]) => [key, withoutClocks(item)]),
  );
}

/** Each operation of the document was attacked in every category its parameters and body call for. */
function expectEveryOperationAttacked(face: Interface, attacked: Map<string, Set<string>>) {
  const operations = operationsOf(face.doc);
  expect(operations.length).toBeGreaterThan(face.name === 'A' ? 100 : 50);
  for (const op of operations) {
    const key = `${op.method} ${op.template}`;
    const seen = [...(attacked.get(key) ?? [])].map((category) => (category.startsWith('body') ? 'body' : category));
    expect({ key, categories: [...new Set(seen)].sort() }).toEqual({ key, categories: expectedCategories(op) });
  }
}

describe('hostile-input corpus', () => {
  const tally = new Tally();
  const sync: SyncOutcome = { frames: 0, byCode: {}, violations: [], typesAttacked: new Set() };
  const started = Date.now();
  let stack: HostileStack;
  let fixtures: Fixtures;
  let interfaceA: Interface;
  let interfaceB: Interface;
  let before: Awaited<ReturnType<typeof persistedState>>;

  beforeAll(async () => {
    stack = await startHostileStack();
    fixtures = await createFixtures(stack);
    const docA = (await (await fetch(`${stack.gatewayUrl}/admin/api/v1.0/openapi.json`)).json()) as OpenApiDocument;
    const docB = (await (await fetch(`${stack.managementUrl}/openapi.json`)).json()) as OpenApiDocument;
    interfaceA = {
      name: 'A',
      baseUrl: stack.gatewayUrl,
      doc: docA,
      contract: 'problem',
      apiKey: stack.operatorKey,
      ids: () => interfaceAIds(fixtures),
    };
    interfaceB = {
      name: 'B',
      baseUrl: stack.managementUrl,
      doc: docB,
      contract: 'odata',
      apiKey: stack.operatorKey,
      ids: (op) => interfaceBIds(fixtures, stack.organizationId, op.template),
    };
    // The fixtures' own events and change records are written before the baseline.
    await new Promise((resolve) => setTimeout(resolve, 500));
    before = await persistedState(stack, fixtures, interfaceA);
  }, 120_000);

  afterAll(async () => {
    closeAgent();
    fixtures?.session.close();
    stack?.memory.stop();
    if (stack) {
      const report = {
        durationMs: Date.now() - started,
        totalRequests: tally.total,
        byStatus: tally.byStatus,
        serverErrors: tally.serverErrors(),
        violations: tally.groupsSince(0),
        syncFrames: sync.frames,
        syncViolations: sync.violations,
        peakRssBytes: stack.memory.peakBytes,
        memoryLimitBytes: kubernetesMemoryLimits(),
      };
      const file = writeReport(report);
      const { violations, syncViolations, ...figures } = report;
      process.stdout.write(
        `hostile corpus: ${JSON.stringify(figures)}; ${violations.length} HTTP and ${syncViolations.length} /sync violation groups; written to ${file}\n`,
      );
    }
    await stack?.stop();
  });

  it('interface A refuses every hostile input on every operation with a Problem JSON 4xx', async () => {
    const mark = tally.violations.size;
    expectEveryOperationAttacked(interfaceA, await attackOperations(interfaceA, tally));
    expect(tally.groupsSince(mark)).toEqual([]);
  }, 120_000);

  it('interface B refuses every hostile input on every operation, OData options included, with an OData error 4xx', async () => {
    const mark = tally.violations.size;
    expectEveryOperationAttacked(interfaceB, await attackOperations(interfaceB, tally));
    expect(tally.groupsSince(mark)).toEqual([]);
  }, 120_000);

  it('both interfaces answer 16 KB URLs, oversized headers and bodies over 1 MiB with their error body, read before any reset', async () => {
    const mark = tally.violations.size;
    await attackFraming(interfaceA, tally);
    await attackFraming(interfaceB, tally);
    expect(tally.groupsSince(mark)).toEqual([]);
  }, 120_000);

  it('/sync answers every hostile frame of every request type with a documented error frame or close, and stays usable', async () => {
    // The live session first: a hostile register taken by mistake would replace it.
    await attackSession(fixtures, sync);
    await attackInvalidUtf8(fixtures, sync);
    await attackOversizedFrame(fixtures, sync);
    await attackRegister(fixtures, sync);
    expect([...sync.typesAttacked].sort()).toEqual([...SYNC_REQUEST_TYPES].sort());
    expect(sync.byCode.Internal ?? 0).toBe(0);
    expect(sync.violations).toEqual([]);
  }, 120_000);

  it('stores and announces nothing a refused request asked for', async () => {
    const after = await persistedState(stack, fixtures, interfaceA);
    expect(after).toEqual(before);
  });

  it('takes or refuses 900 000-character and non-UTF-8 strings in every body field, and reads every list back, never with a 5xx', async () => {
    const mark = tally.violations.size;
    await attackToleratedBodies(interfaceA, tally);
    await attackToleratedBodies(interfaceB, tally);
    await readEveryList(interfaceB, tally);
    expect(tally.groupsSince(mark)).toEqual([]);
  }, 120_000);

  it("keeps every service's peak resident memory under its Kubernetes memory limit", () => {
    stack.memory.sample();
    const limits = kubernetesMemoryLimits();
    for (const service of ATTACKED_SERVICES) {
      expect({ service, limit: limits[service] }).toEqual({ service, limit: expect.any(Number) });
      expect({ service, peakRssBytes: stack.memory.peakBytes[service] }).toEqual({
        service,
        peakRssBytes: expect.any(Number),
      });
      expect({ service, underLimit: stack.memory.peakBytes[service]! < limits[service]! }).toEqual({
        service,
        underLimit: true,
      });
    }
  });
});
