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
import {
  API_VERSION_DOC,
  LIST_QUERY_DOC,
  parseListQuery,
  parseSingleQuery,
  SINGLE_QUERY_DOC,
} from '../common/odata-query.js';
import { paymentMethodModel } from './payment-method.model.js';
import { PaymentMethodsService } from './payment-methods.service.js';

const tags = ['Payment methods'];
const CARD =
  'The card `number` (12 to 19 digits, Luhn-checked) and `securityCode` (3 or 4 digits) are accepted, checked and dropped: never stored nor returned. ' +
  'The service keeps `maskedNumber` (last four digits), `brand` (derived from the number when not given), expiry, holder and address.';

@Controller('PaymentMethods')
export class PaymentMethodsController {
  constructor(private readonly methods: PaymentMethodsService) {}

  @Get()
  @ApiDoc({
    summary: "List the organization's payment methods",
    tags,
    response: PaymentMethodList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.methods.list(caller, parseListQuery(query, paymentMethodModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Add a payment method',
    description: CARD,
    tags,
    body: PaymentMethodCreateBody,
    response: PaymentMethod,
    status: 201,
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.methods.create(caller, readBody(PaymentMethodCreateBody, body));
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get a payment method', tags, response: PaymentMethod, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.methods.get(caller, id, parseSingleQuery(query, paymentMethodModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace a payment method',
    description: `${CARD} Without a new number the masked number (and brand, unless given) of the card stay.`,
    tags,
    body: PaymentMethodUpdateBody,
    response: PaymentMethod,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.methods.update(caller, id, readBody(PaymentMethodUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update a payment method',
    description: CARD,
    tags,
    body: PaymentMethodUpdateBody,
    response: PaymentMethod,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.methods.update(caller, id, readBody(PaymentMethodUpdateBody, body), 'merge');
  }
}
