import type { ODataQuery } from '@switchboard/odata';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { invalid } from '../common/bodies.js';
import { RecordReader, type EntityValues, type ListAnswer } from '../common/record-reader.js';
import { APPLICATION_CONFIGS } from './application-config.model.js';

/** The application config as parent of application webhooks and channel configs (`applicationConfigId`). */
export class ApplicationConfigParent {
  private readonly configs = new RecordReader(APPLICATION_CONFIGS);

  /** With `applicationConfigId`, the children of that config (404 when it is not the organization's). */
  listChildren(
    children: RecordReader,
    ds: DataSource,
    caller: Caller,
    query: ODataQuery,
    applicationConfigId?: string,
  ): Promise<ListAnswer> {
    return children.listUnder(ds, caller, query, {
      reader: this.configs,
      id: applicationConfigId,
      column: 'application_config_id',
      param: 'applicationConfigId',
    });
  }

  /** The parent of a stored child. */
  async of(m: EntityManager, caller: Caller, child: EntityValues): Promise<EntityValues> {
    return (await this.configs.find(m, caller, child.applicationConfigId as string))!;
  }

  /** The parent a body names: 400 when it names none, or one that is not the organization's. */
  async named(m: EntityManager, caller: Caller, applicationConfigId: string | null | undefined): Promise<EntityValues> {
    if (typeof applicationConfigId !== 'string') throw invalid('applicationConfigId', 'is required');
    const parent = await this.configs.find(m, caller, applicationConfigId);
    if (!parent) throw invalid('applicationConfigId', 'is not an application config of the organization');
    return parent;
  }
}
