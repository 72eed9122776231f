import { parseQueryOptions } from './options.js';
import { projectRecord } from './project.js';
import { itemModel } from './testing/models.js';
import { expandRecords } from './typeorm-records.js';

const noDatabase = {
  createQueryBuilder: () => {
    throw new Error('JSONB expansions must not touch the database');
  },
} as unknown as Parameters<typeof expandRecords>[0];

function record(): Record<string, unknown> {
  return {
    id: 1,
    name: 'n',
    price: 2.5,
    address: { street: 's', city: 'c', geo: { lat: 1.5 } },
    secret: 'hidden?',
    lines: [
      { id: 3, name: 'c', quantity: 0, parts: [{ id: 1, label: 'p' }] },
      { id: 1, name: 'a', quantity: 5, parts: [] },
      { id: 2, name: null, quantity: 7, parts: null },
    ],
    owner: { id: 9 },
  };
}

describe('projectRecord', () => {
  it('keeps every property but drops navigation properties that are not expanded', () => {
    const q = parseQueryOptions({}, itemModel);
    const out = projectRecord(record(), q, itemModel);
    expect(Object.keys(out)).toEqual(['id', 'name', 'price', 'address', 'secret']);
  });

  it('keeps only selected properties and nested paths', () => {
    const q = parseQueryOptions({ $select: 'id,address/city,address/geo/lat,lines' }, itemModel);
    expect(projectRecord(record(), q, itemModel)).toEqual({ id: 1, address: { city: 'c', geo: { lat: 1.5 } } });
    const nullComplex = { ...record(), address: null };
    expect(projectRecord(nullComplex, q, itemModel)).toEqual({ id: 1, address: null });
  });

  it('adds expanded navigations, projected with their nested $select and $expand', async () => {
    const q = parseQueryOptions(
      {
        $select: 'id',
        $expand:
          'lines($filter=quantity gt 0 or name eq null;$orderby=name desc;$skip=0;$top=2;$count=true;$select=id,name;$expand=parts($select=label))',
      },
      itemModel,
    );
    const rec = record();
    await expandRecords(
      noDatabase,
      [rec],
      q.expand.filter((e) => e.navigation!.relation.kind === 'jsonb'),
      itemModel,
    );
    expect(projectRecord(rec, q, itemModel)).toEqual({
      id: 1,
      lines: [
        { id: 1, name: 'a', parts: [] },
        { id: 2, name: null, parts: [] },
      ],
      'lines@odata.count': 2,
    });
  });
});
