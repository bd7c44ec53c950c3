/**
 * The layer rule (docs/architecture.md#the-layer-rule), checked by `npm run layers` in `npm run lint`.
 *
 * functions/src, top to bottom:
 *   top       index.ts, app.ts          which functions exist, which channels the `api` function mounts
 *   channels  http/ mcp/ schedules/ chat/   ways in; never import each other
 *   runs/                               the run core every channel uses
 *   access/ identity/                   who may ask, what they may see and spend; who BigQuery runs as
 *   agent/ → context/ → tools/
 *   base      checkpointer/ config/ contract/ and the root modules (errors.ts, lru.ts, …)
 * An import never runs upward. web/src imports from the functions workspace only its contract.
 */
const FN = "^functions/src/";
const CHANNELS = ["http", "mcp", "schedules", "chat"];
const layers = [
  { name: "top", path: `${FN}(index|app)\\.ts$` },
  { name: "channels", path: `${FN}(${CHANNELS.join("|")})/` },
  { name: "runs", path: `${FN}runs/` },
  { name: "access", path: `${FN}(access|identity)/` },
  { name: "agent", path: `${FN}agent/` },
  { name: "context", path: `${FN}context/` },
  { name: "tools", path: `${FN}tools/` },
];

/** Each layer may not import any layer above it. */
const upward = layers.slice(1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} is below ${layers
    .slice(0, i + 1)
    .map((l) => l.name)
    .join(", ")}: take what you need as a parameter instead (docs/architecture.md#the-layer-rule).`,
  severity: "error",
  from: { path: layer.path },
  to: { path: layers.slice(0, i + 1).map((l) => l.path) },
}));

/** The base layer (everything in functions/src not named above) imports none of the layers. */
const base = {
  name: "no-upward-from-base",
  comment:
    "checkpointer/, config/, contract/ and the root modules are the bottom layer: they import no other layer.",
  severity: "error",
  from: { path: FN, pathNot: layers.map((l) => l.path) },
  to: { path: layers.map((l) => l.path) },
};

/** Channels are ways in over the run core; one channel never reaches into another. */
const channels = CHANNELS.map((c) => ({
  name: `channel-${c}-imports-no-other-channel`,
  comment: `${c}/ is a channel: shared parts belong in runs/, access/ or below, and app.ts composes the channels.`,
  severity: "error",
  from: { path: `${FN}${c}/` },
  to: { path: `${FN}(${CHANNELS.filter((o) => o !== c).join("|")})/` },
}));

module.exports = {
  forbidden: [
    ...upward,
    base,
    ...channels,
    {
      name: "identity-not-into-access",
      comment: "identity/ sits beside access/ and under it: access/ may use identity/, never the reverse.",
      severity: "error",
      from: { path: `${FN}identity/` },
      to: { path: `${FN}access/` },
    },
    {
      name: "contract-imports-nothing",
      comment: "contract/ is shared with the page: it imports only itself (no package, no other module).",
      severity: "error",
      from: { path: `${FN}contract/` },
      to: { pathNot: `${FN}contract/` },
    },
    {
      name: "page-imports-only-the-contract",
      comment: "web/src imports from the functions workspace only @quarry/functions/contract.",
      severity: "error",
      from: { path: "^web/src/" },
      to: { path: "^functions/", pathNot: "^functions/src/contract/" },
    },
    {
      name: "no-circular",
      comment: "No import cycles (a cycle is a layer broken in both directions).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(lib|dist|node_modules)/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
