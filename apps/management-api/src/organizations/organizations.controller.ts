import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  Organization,
  OrganizationCreateBody,
  OrganizationCreated,
  OrganizationList,
  OrganizationUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { organizationModel } from './organization.model.js';
import { OrganizationsService } from './organizations.service.js';

const docs = entitySetDocs('Organizations');
const DISABLE_DOC =
  '`disabled: true` disables the organization, `false` enables it again; only an operator key changes it (403 otherwise; sending the current value is accepted), and never for its own organization (409). ' +
  "While disabled, the organization's API keys answer 403 on both interfaces (a gateway drops its cached verdicts on the `management-api.v1.organizations.changed` notice, at the latest after API_KEY_CACHE_TTL_MS), " +
  'its user tokens answer 403, and client tokens of its applications are refused at /sync `register` and `join` (ApplicationRefused). Clients already registered stay connected until they leave or are kicked.';

@Controller('Organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @ApiDoc(
    docs.list("The caller's organization (a list of one); every organization for an operator key", OrganizationList, {
      description:
        '`address`, `primaryContact` and `additionalContacts` are navigation properties stored with the organization: always present, and `$expand` takes nested options for them. ' +
        'An operator key (the bootstrap key) lists every organization, with every query option (`$filter=disabled eq true`).',
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.organizations.list(caller, parseListQuery(query, organizationModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create(
      'Create an organization and its first API key (operator keys only)',
      OrganizationCreateBody,
      OrganizationCreated,
      {
        description:
          'Onboards a customer: the organization (`name` required, 1 to 200 characters; `paymentMethodId` must be null) and one API key of it, in one transaction. ' +
          "The answer is the organization with `apiKey`: the key's record with its value in `key`, shown this once (only a hash is stored). " +
          'The key is an ordinary key of the new organization: it sees and changes that organization only. A key that is not an operator key: 403. ' +
          "Change records are written to the new organization's change log and to the operator's.",
        errors: [403],
      },
    ),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.organizations.create(caller, readBody(OrganizationCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(
    docs.get(
      "Get the caller's organization (any other id: 404; an operator key reads every organization)",
      Organization,
    ),
  )
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.organizations.get(caller, id, parseSingleQuery(query, organizationModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update(
      "Replace the caller's organization (an operator key: any organization)",
      OrganizationUpdateBody,
      Organization,
      {
        description:
          'Absent fields become null (`address` and `primaryContact` empty objects); an absent `disabled` is kept. `paymentMethodId` must name a payment method of the organization. `userIds` is managed by the service. ' +
          DISABLE_DOC,
        errors: [403, 404, 409],
      },
    ),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.organizations.update(caller, id, readBody(OrganizationUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(
    docs.update(
      'Partially update the caller\'s organization (an operator key: any organization; `{ "disabled": true }` disables it)',
      OrganizationUpdateBody,
      Organization,
      { description: DISABLE_DOC, errors: [403, 404, 409] },
    ),
  )
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.organizations.update(caller, id, readBody(OrganizationUpdateBody, body), 'merge');
  }
}
