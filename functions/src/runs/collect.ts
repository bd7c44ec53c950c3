/**
 * A RunOutput that keeps a run's events as they come instead of streaming them: what a channel that
 * answers once (MCP's `ask`, a chat app) shapes its answer from. Phases are handed to a callback
 * as words (MCP progress notifications, Slack's status line) as they happen.
 */
import type { ErrorBody } from "../contract/errors";
import type { ComputedFacts, Phase, QuarryEvent } from "../contract/events";
import type { PlanReview } from "../contract/investigations";
import type { RunOutput } from "./output";

/** What a phase is called in a progress notification. */
const PHASE_WORDS: Partial<Record<Phase, string>> = {
  planning: "planning",
  querying: "running SQL",
  verifying: "checking the result",
  asking: "asking a clarifying question",
  answering: "writing the answer",
};

/** A clarifying question as the run's interrupt carries it (agent/nodes/clarify.ts). */
interface Clarification {
  question: string;
  choices: string[];
}

/** The events of one run, kept as they come: what `ask` answers with. */
export class CollectingOutput implements RunOutput {
  readonly sql: string[] = [];
  result: Extract<QuarryEvent, { type: "result" }> | undefined;
  answer = "";
  followUps: string[] = [];
  computed: ComputedFacts | undefined;
  clarification: Clarification | undefined;
  error: ErrorBody | undefined;
  private disconnect: (() => void) | undefined;
  private gone = false;

  constructor(private readonly onPhase: (words: string) => void) {}

  open(): void {}
  end(): void {}

  sendJson(event: string, json: string): void {
    this.send(event, JSON.parse(json) as unknown);
  }

  send(event: string, data: unknown): void {
    if (event === "custom") this.custom(data as QuarryEvent);
    else if (event === "updates") this.update(data as Record<string, unknown>);
    else if (event === "error") this.error = data as ErrorBody;
  }

  onDisconnect(cb: () => void): void {
    this.disconnect = cb;
    if (this.gone) cb();
  }

  /** Whether the client cancelled. */
  get cancelled(): boolean {
    return this.gone;
  }

  /** The client cancelled: the run stops as it does when a stream's client goes away. */
  cancel(): void {
    this.gone = true;
    this.disconnect?.();
  }

  private custom(ev: QuarryEvent): void {
    if (ev.type === "phase" && PHASE_WORDS[ev.phase]) this.onPhase(PHASE_WORDS[ev.phase]!);
    else if (ev.type === "result") {
      this.result = ev;
      this.sql.push(ev.sql);
    } else if (ev.type === "suggestions") this.followUps = ev.questions;
    else if (ev.type === "computed") this.computed = ev.computed;
  }

  private update(data: Record<string, unknown>): void {
    // The answer is the generator's, or the refusal ingress writes for a question it will not run;
    // an investigation's is its report (or why its plan was refused, or that it was cancelled).
    for (const node of ANSWERING_NODES) {
      const update = data[node] as { finalAnswer?: unknown } | undefined;
      if (typeof update?.finalAnswer === "string" && update.finalAnswer) this.answer = update.finalAnswer;
    }
    const interrupts = data.__interrupt__ as { value?: Partial<Clarification> }[] | undefined;
    const asked = interrupts?.[0]?.value;
    const plan = asked && (asked as Partial<PlanReview>).kind === "investigation_plan";
    if (plan) this.clarification = planQuestion(asked as PlanReview & { errors?: string[] });
    else if (asked && typeof asked.question === "string") {
      this.clarification = { question: asked.question, choices: asked.choices ?? [] };
    }
  }
}

const ANSWERING_NODES = [
  "generator",
  "ingress",
  "investigate_report",
  "investigate_plan",
  "investigate_review",
];

/** An investigation's plan as a question in words: its steps, and how to answer. */
function planQuestion(review: PlanReview & { errors?: string[] }): Clarification {
  const { plan } = review;
  const lines = [
    `Investigation plan: ${plan.question}`,
    `Hypotheses: ${plan.hypotheses.join("; ")}`,
    ...plan.steps.map((s) => `${s.id}. ${s.title} (${s.kind})`),
    ...(review.errors ?? []).map((e) => `Not applied: ${e}`),
    review.howToAnswer,
  ];
  return { question: lines.join("\n"), choices: ["run", "cancel"] };
}

/** How a collected turn ended, as a channel that answers once says it. */
export function turnStatus(
  runStatus: string,
  out: CollectingOutput,
): "answered" | "asking" | "failed" | "stopped" {
  if (runStatus === "cancelled") return "stopped";
  if (runStatus === "error") return "failed";
  return out.clarification ? "asking" : "answered";
}
