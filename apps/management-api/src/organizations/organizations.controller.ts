import { Body, Controller, Get, Param, Patch, Put, Query } from '@nestjs/common';
import { Organization, OrganizationList, OrganizationUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { API_VERSION_DOC, LIST_QUERY_DOC, parseListQuery, parseSingleQuery, SINGLE_QUERY_DOC } from '../common/odata-query.js';
import { organizationModel } from './organization.model.js';
import { OrganizationsService } from './organizations.service.js';

const tags = ['Organizations'];

@Controller('Organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @ApiDoc({
    summary: "The caller's organization (a list of one)",
    description: '`address`, `primaryContact` and `additionalContacts` are navigation properties stored with the organization: always present, and `$expand` takes nested options for them.',
    tags,
    response: OrganizationList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.organizations.list(caller, parseListQuery(query, organizationModel));
  }

  @Get(':id')
  @ApiDoc({ summary: "Get the caller's organization (any other id: 404)", tags, response: Organization, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.organizations.get(caller, id, parseSingleQuery(query, organizationModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: "Replace the caller's organization",
    description: 'Absent fields become null (`address` and `primaryContact` empty objects). `paymentMethodId` must name a payment method of the organization. `userIds` is managed by the service.',
    tags,
    body: OrganizationUpdateBody,
    response: Organization,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.organizations.update(caller, id, readBody(OrganizationUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({ summary: "Partially update the caller's organization", tags, body: OrganizationUpdateBody, response: Organization, errors: [404], query: API_VERSION_DOC })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.organizations.update(caller, id, readBody(OrganizationUpdateBody, body), 'merge');
  }
}
