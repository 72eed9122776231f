import { DataSource } from 'typeorm';
import { sortRecords } from './evaluate.js';
import { defineEntityModel } from './model.js';
import { parseQueryOptions } from './options.js';
import { applyODataQuery } from './typeorm.js';

const model = defineEntityModel({
  name: 'Entry',
  key: 'id',
  table: 'entry',
  properties: [
    { name: 'id', kind: 'guid', nullable: false },
    { name: 'changedOn', kind: 'datetime-ms', column: 'changed_on', nullable: false },
    { name: 'note', kind: 'string' },
  ],
});

function orderBySql(orderby: string): string {
  const ds = new DataSource({ type: 'postgres', url: 'postgres://unused@127.0.0.1:1/unused' });
  const qb = ds.createQueryBuilder().from('entry', 'e');
  applyODataQuery(qb, parseQueryOptions({ $orderby: orderby }, model), model, 'e');
  return qb.getQuery().split('ORDER BY ')[1]!.split(' LIMIT')[0]!;
}

describe('ORDER BY', () => {
  it('gives NOT NULL properties no NULLS clause and walks the key in the last direction', () => {
    expect(orderBySql('changedOn desc')).toBe('"e"."changed_on" DESC, "e"."id" DESC');
    expect(orderBySql('changedOn')).toBe('"e"."changed_on" ASC, "e"."id" ASC');
  });

  it('keeps OData null ordering for nullable properties', () => {
    expect(orderBySql('note desc')).toBe('("e"."note" COLLATE "C") DESC NULLS LAST, "e"."id" DESC');
    expect(orderBySql('note asc,changedOn desc')).toBe(
      '("e"."note" COLLATE "C") ASC NULLS FIRST, "e"."changed_on" DESC, "e"."id" DESC',
    );
  });

  it('the in-memory sort breaks ties the same way', () => {
    const rows = [
      { id: 'a', changedOn: 1 },
      { id: 'b', changedOn: 1 },
    ];
    const byDesc = parseQueryOptions({ $orderby: 'changedOn desc' }, model).orderBy;
    const byAsc = parseQueryOptions({ $orderby: 'changedOn asc' }, model).orderBy;
    expect(sortRecords(rows, byDesc, (r) => r.id).map((r) => r.id)).toEqual(['b', 'a']);
    expect(sortRecords(rows, byAsc, (r) => r.id).map((r) => r.id)).toEqual(['a', 'b']);
  });
});
