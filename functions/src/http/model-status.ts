/**
 * The model status the web page and the launcher read from `GET /client-config`: the provider and
 * model in use, or what to set. Decided by the same code that builds the model (`resolveModel`),
 * without loading LangChain, so the answer costs nothing at cold start.
 */
import { config } from "../config";
import { PROVIDER_NAMES, resolveModel, type SetupOption } from "../agent/model/choose";

export type ClientModelStatus =
  | { ready: true; provider: string; providerName: string; model: string; endpoint?: string }
  | {
      ready: false;
      error: string;
      message: string;
      setup: Pick<SetupOption, "provider" | "title" | "command" | "link">[];
    };

let cached: ClientModelStatus | undefined;

export function clientModelStatus(): ClientModelStatus {
  if (cached) return cached;
  const cfg = config();
  const status = resolveModel(cfg.model);
  cached = status.ready
    ? {
        ready: true,
        provider: status.provider,
        providerName: PROVIDER_NAMES[status.provider],
        model: status.model,
        // Locally the launcher prints where requests go; a deployed function keeps that to itself.
        ...(cfg.inEmulator ? { endpoint: status.endpoint } : {}),
      }
    : { ready: false, error: status.error, message: status.message, setup: [...status.setup] };
  return cached;
}
