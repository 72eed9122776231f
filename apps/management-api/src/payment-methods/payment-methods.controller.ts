import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  PaymentMethod,
  PaymentMethodCreateBody,
  PaymentMethodList,
  PaymentMethodUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { paymentMethodModel } from './payment-method.model.js';
import { PaymentMethodsService } from './payment-methods.service.js';

const docs = entitySetDocs('Payment methods');
const CARD =
  'The card `number` (12 to 19 digits, Luhn-checked) and `securityCode` (3 or 4 digits) are accepted, checked and dropped: never stored nor returned. ' +
  'The service keeps `maskedNumber` (last four digits), `brand` (derived from the number when not given), expiry, holder and address.';

@Controller('PaymentMethods')
export class PaymentMethodsController {
  constructor(private readonly methods: PaymentMethodsService) {}

  @Get()
  @ApiDoc(docs.list("List the organization's payment methods", PaymentMethodList))
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.methods.list(caller, parseListQuery(query, paymentMethodModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(docs.create('Add a payment method', PaymentMethodCreateBody, PaymentMethod, { description: CARD }))
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.methods.create(caller, readBody(PaymentMethodCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a payment method', PaymentMethod))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.methods.get(caller, id, parseSingleQuery(query, paymentMethodModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update('Replace a payment method', PaymentMethodUpdateBody, PaymentMethod, {
      description: `${CARD} Without a new number the masked number (and brand, unless given) of the card stay.`,
    }),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.methods.update(caller, id, readBody(PaymentMethodUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(
    docs.update('Partially update a payment method', PaymentMethodUpdateBody, PaymentMethod, { description: CARD }),
  )
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.methods.update(caller, id, readBody(PaymentMethodUpdateBody, body), 'merge');
  }
}
