import { Body, Controller, Get, Param, Patch, Put, Query } from '@nestjs/common';
import { UserAccount, UserAccountList, UserAccountUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import {
  API_VERSION_DOC,
  LIST_QUERY_DOC,
  parseListQuery,
  parseSingleQuery,
  SINGLE_QUERY_DOC,
} from '../common/odata-query.js';
import { userAccountModel } from './user-account.model.js';
import { UserAccountsService } from './user-accounts.service.js';

const tags = ['User accounts'];

@Controller('UserAccounts')
export class UserAccountsController {
  constructor(private readonly accounts: UserAccountsService) {}

  @Get()
  @ApiDoc({
    summary: "List the organization's user accounts",
    description:
      'User accounts come from the identity provider; there is no create operation. `identities` is a navigation property stored with the account (always present; `$expand` takes nested options).',
    tags,
    response: UserAccountList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.accounts.list(caller, parseListQuery(query, userAccountModel));
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get a user account', tags, response: UserAccount, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.accounts.get(caller, id, parseSingleQuery(query, userAccountModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace a user account (absent fields become null, false or 0; `identities` is not writable)',
    tags,
    body: UserAccountUpdateBody,
    response: UserAccount,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.accounts.update(caller, id, readBody(UserAccountUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update a user account',
    tags,
    body: UserAccountUpdateBody,
    response: UserAccount,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.accounts.update(caller, id, readBody(UserAccountUpdateBody, body), 'merge');
  }
}
