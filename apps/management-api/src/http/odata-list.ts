import { Type, type TSchema } from '@sinclair/typebox';

/** The `{ "value": [...] }` envelope of interface B lists, for the OpenAPI document. */
export function ODataList<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    { value: Type.Array(item), '@odata.count': Type.Optional(Type.Integer({ description: 'Total matching records, with $count=true' })) },
    { $id: `${name}List` },
  );
}
