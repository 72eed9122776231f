import { ACTION_NAMES, ERROR_CODES } from '@switchboard/contracts';
import { OpenApiController, PUBLISHED_CONTROLLERS } from './openapi.controller.js';

const ROUTE_METHOD = 'method';
const API_DOC = 'switchboard:api-doc';

describe('OpenAPI document', () => {
  it('documents every route with @ApiDoc', () => {
    const undocumented: string[] = [];
    // The app serves exactly the published list (app.ts), so every served route is checked here.
    for (const controller of PUBLISHED_CONTROLLERS) {
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as unknown as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        if (Reflect.getMetadata(ROUTE_METHOD, handler) === undefined) continue;
        if (!Reflect.getMetadata(API_DOC, handler)) undocumented.push(`${controller.name}.${name}`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it('covers every operation of http-contract.md interface B', () => {
    const doc = new OpenApiController().openapi() as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods('/ApiKeys')).toEqual(['get', 'post']);
    expect(methods('/ApiKeys/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/ApplicationConfigs')).toEqual(['get', 'post']);
    expect(methods('/ApplicationConfigs/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/ApplicationWebhooks')).toEqual(['get', 'post']);
    expect(methods('/ApplicationWebhooks/{id}')).toEqual(['delete', 'get', 'patch', 'put']);
    expect(methods('/ChannelConfigs')).toEqual(['get', 'post']);
    expect(methods('/ChannelConfigs/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/ApplicationWebhooks/{id}/SendTest')).toEqual(['post']);
    expect(methods('/ChannelWebhooks/{id}/SendTest')).toEqual(['post']);
    expect(methods('/ChannelWebhooks')).toEqual(['get', 'post']);
    expect(methods('/ChannelWebhooks/{id}')).toEqual(['delete', 'get', 'patch', 'put']);
    expect(methods('/ChangeRecords')).toEqual(['get']);
    expect(methods('/ChangeRecords/{id}')).toEqual(['get']);
    expect(methods('/Usage')).toEqual(['get']);
    expect(methods('/ChannelRecordings/{applicationId}')).toEqual(['get']);
    expect(methods('/ChannelRecordings/{applicationId}/{channelId}/{channelRecordingId}')).toEqual(['delete', 'get']);
    for (const read of ['MuxJson', 'Url', 'AudioUrl', 'VideoUrl'])
      expect(methods(`/ChannelRecordings/{applicationId}/{channelId}/{channelRecordingId}/${read}`)).toEqual(['get']);
    expect(methods('/ConnectionRecordings/{applicationId}')).toEqual(['get']);
    expect(methods('/ConnectionRecordings/{applicationId}/{connectionRecordingId}')).toEqual(['get']);
    for (const read of ['Url', 'AudioUrl', 'VideoUrl'])
      expect(methods(`/ConnectionRecordings/{applicationId}/{connectionRecordingId}/${read}`)).toEqual(['get']);
    // Operators create organizations (POST), beyond the contract's list.
    expect(methods('/Organizations')).toEqual(['get', 'post']);
    expect(methods('/Organizations/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/PaymentMethods')).toEqual(['get', 'post']);
    expect(methods('/PaymentMethods/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/RecordingStorage/UsedSize')).toEqual(['get']);
    expect(methods('/RecordingStorage/UsedSize/{applicationId}')).toEqual(['get']);
    expect(methods('/Subscriptions')).toEqual(['get']);
    expect(methods('/Subscriptions/{id}')).toEqual(['get', 'patch', 'put']);
    expect(methods('/UserAccounts')).toEqual(['get']);
    expect(methods('/UserAccounts/{id}')).toEqual(['get', 'patch', 'put']);
    // The action list itself is pinned by the contract's tests (libs/contracts interface-b.spec.ts).
    for (const action of ACTION_NAMES) expect(methods(`/ApplicationConfigs/{id}/${action}`)).toEqual(['post']);
    const kick = doc.paths['/ApplicationConfigs/{id}/KickUser']!.post as {
      responses: Record<string, unknown>;
      requestBody: unknown;
    };
    expect(Object.keys(kick.responses)).toEqual(expect.arrayContaining(['204', '404', '503', '504']));
    expect(JSON.stringify(kick.requestBody)).toContain('KickUserPayload');
    const list = doc.paths['/ApplicationConfigs']!.get as { parameters: Array<{ name: string }> };
    expect(list.parameters.map((p) => p.name)).toEqual([
      '$filter',
      '$orderby',
      '$top',
      '$skip',
      '$count',
      '$select',
      '$expand',
      'api-version',
    ]);
    // The forwarded reads take $expand too (4.B rules 4 and 5), bound by the answering service.
    const params = (path: string) =>
      (doc.paths[path]!.get as { parameters: Array<{ name: string }> }).parameters.map((p) => p.name);
    const forwardedLists = [
      '/Usage',
      '/WebhookDeliveries',
      '/ChannelRecordings/{applicationId}',
      '/ConnectionRecordings/{applicationId}',
    ];
    for (const path of forwardedLists)
      expect(params(path)).toEqual(
        expect.arrayContaining(['$filter', '$orderby', '$top', '$skip', '$count', '$select', '$expand']),
      );
    for (const path of [
      '/WebhookDeliveries/{id}',
      '/ChannelRecordings/{applicationId}/{channelId}/{channelRecordingId}',
      '/ConnectionRecordings/{applicationId}/{connectionRecordingId}',
    ]) {
      expect(params(path).filter((n) => n.startsWith('$'))).toEqual(['$select', '$expand']);
    }
    for (const path of [...forwardedLists, '/WebhookDeliveries/{id}'])
      expect((doc.paths[path]!.get as { description: string }).description).toContain('`*` expands nothing');
    for (const schema of [
      'ApplicationConfig',
      'ApplicationConfigList',
      'ChannelConfig',
      'ODataError',
      'ClaimsPayload',
      'StringValueResponse',
      'ManagementChannelRecording',
    ]) {
      expect(doc.components.schemas).toHaveProperty(schema);
    }
  });

  it('describes errors with every code the server sends, the query codes of the contract included', () => {
    const doc = new OpenApiController().openapi() as { components: { schemas: Record<string, any> } };
    const error = doc.components.schemas.ODataError.properties.error;
    const codes = (schema: { anyOf?: Array<{ const: string }>; enum?: string[] }) =>
      (schema.enum ?? schema.anyOf?.map((s) => s.const) ?? []).slice().sort();
    // http-contract.md interface B: "a fixed code per failure kind (QuerySyntaxError, QueryLimitExceeded,
    // UnknownProperty, ValidationFailed,
    // NotFound, Unauthorized, Forbidden, Conflict)"; the transport codes (ERROR_CODES) reach the body too
    // (odata-errors.ts).
    const contract = [
      'QuerySyntaxError',
      'QueryLimitExceeded',
      'UnknownProperty',
      'ValidationFailed',
      'NotFound',
      'Unauthorized',
      'Forbidden',
      'Conflict',
    ];
    const expected = [...new Set([...contract, ...ERROR_CODES])].sort();
    expect(codes(error.properties.code)).toEqual(expected);
    expect(codes(error.properties.details.items.properties.code)).toEqual(expected);
  });

  it('documents the change record types the change log writes', () => {
    const doc = new OpenApiController().openapi() as { components: { schemas: Record<string, any> } };
    const type = doc.components.schemas.ChangeRecord.properties.type as { anyOf: Array<{ const: string }> };
    expect(type.anyOf.map((s) => s.const)).toEqual(['Create', 'Update', 'Delete']);
  });
});
