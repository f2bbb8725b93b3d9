// Import rules of the workspace (docs/architecture.md "Contracts and fixtures"), checked by
// `npm test` (scripts/test.ts): no cycles, and no import upwards between the layers
//   packages/domain  (pure deciders)      ← packages/contracts (schemas, generated types) only
//   packages/runtime (config, observability, process) ← nothing of the workspace: the adapters build on it
//   packages/*       (adapters, runtime)  ← never services/*, scripts/, tests/, bench/
//   services/*       (gateway, projector, operator) ← never scripts/, tests/, bench/, nor each other
// and every workspace is imported by its package name, never by a path into its src/.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'A cycle of imports (type-only included) tangles modules: split out what both sides need.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'packages/domain holds the pure deciders: it imports nothing of the workspace but contracts (STYLE.md).',
      from: { path: '^packages/domain/src' },
      to: { path: '^(packages/(?!domain|contracts)[^/]+|services|scripts|tests|bench)/' },
    },
    {
      name: 'runtime-is-the-base',
      severity: 'error',
      comment:
        "packages/runtime is what every package is built on: it imports no other workspace. An adapter's settings and the rules between them live with the adapter (packages/kafka settingsChecks.ts), and entry points pass them to settingsAtStart.",
      from: { path: '^packages/runtime/' },
      to: { path: '^(packages/(?!runtime/)[^/]+|services|scripts|tests|bench)/' },
    },
    {
      name: 'packages-below-services',
      severity: 'error',
      comment: 'packages/* are the adapters and the runtime the services are built from; they never import a service.',
      from: { path: '^packages/' },
      to: { path: '^(services|scripts|tests|bench)/' },
    },
    {
      name: 'services-below-tools',
      severity: 'error',
      comment: 'A service does not import the scripts, tests or benches that drive it.',
      from: { path: '^services/' },
      to: { path: '^(scripts|tests|bench)/' },
    },
    {
      name: 'no-service-to-service',
      severity: 'error',
      comment:
        'A service is a process (gateway, projector, operator tools); what two of them share lives in a package (the projection core is packages/projection).',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'workspaces-through-their-package-name',
      severity: 'error',
      comment:
        'Another workspace is imported by its package name (@ingest/…), which resolves to an entry its package.json exports; never by a relative path into its files.',
      from: { path: '^(packages/[^/]+|services/[^/]+)/' },
      to: { path: '^(packages|services)/', pathNot: '^$1/', dependencyTypes: ['local'] },
    },
    {
      name: 'tools-through-package-names',
      severity: 'error',
      comment:
        'Scripts, tests and benches use the workspaces as their users do: through their package names, not relative paths into their files.',
      from: { path: '^(scripts|tests|bench)/' },
      to: { path: '^(packages|services)/', dependencyTypes: ['local'] },
    },
    {
      name: 'runtime-through-its-index',
      severity: 'error',
      comment:
        'packages/runtime is split by purpose (config, observability, process) behind one index: import @ingest/runtime (its fixtures @ingest/runtime/testing), not its folders.',
      from: { pathNot: '^packages/runtime/' },
      to: { path: '^packages/runtime/src/(?!index\\.ts$)' },
    },
    {
      name: 'no-fixtures-in-src',
      severity: 'error',
      comment: 'Test fixtures live beside src/ (packages/*/testing), for tests, benches and scripts; production code does not import them.',
      from: { path: '^(packages|services)/[^/]+/src/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(packages|services)/[^/]+/testing/' },
    },
    {
      name: 'no-test-imports-in-src',
      severity: 'error',
      comment: 'Production code does not import test files.',
      from: { path: '^(packages|services)/[^/]+/src/', pathNot: '\\.test\\.ts$' },
      to: { path: '\\.test\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.tools|\\.data|deploy/kafka/libs)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mjs', '.js', '.json'],
    },
    combinedDependencies: true,
  },
};
