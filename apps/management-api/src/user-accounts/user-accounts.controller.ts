import { Body, Controller, Get, Param, Patch, Put, Query } from '@nestjs/common';
import { UserAccount, UserAccountList, UserAccountUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { userAccountModel } from './user-account.model.js';
import { UserAccountsService } from './user-accounts.service.js';

const docs = entitySetDocs('User accounts');

@Controller('UserAccounts')
export class UserAccountsController {
  constructor(private readonly accounts: UserAccountsService) {}

  @Get()
  @ApiDoc(
    docs.list("List the organization's user accounts", UserAccountList, {
      description:
        'User accounts come from the identity provider; there is no create operation. `identities` is a navigation property stored with the account (always present; `$expand` takes nested options).',
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.accounts.list(caller, parseListQuery(query, userAccountModel));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a user account', UserAccount))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.accounts.get(caller, id, parseSingleQuery(query, userAccountModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update(
      'Replace a user account (absent fields become null, false or 0; `identities` is not writable)',
      UserAccountUpdateBody,
      UserAccount,
    ),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.accounts.update(caller, id, readBody(UserAccountUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(docs.update('Partially update a user account', UserAccountUpdateBody, UserAccount))
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.accounts.update(caller, id, readBody(UserAccountUpdateBody, body), 'merge');
  }
}
