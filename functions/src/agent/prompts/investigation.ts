import { ROLE_INVESTIGATOR, ROLE_REPORTER } from "./system";

/** The investigation planner: one call to `submit_plan` with a typed plan (agent/investigation/plan.ts). */
export const INVESTIGATION_PLANNER_PROMPT = `${ROLE_INVESTIGATOR}
{preamble}
The user asks a "why" question. Do not answer it yet: call submit_plan once with a plan of analysis steps that Quarry will run, and the user will review first.
- question: the question restated as what will be measured, with the periods.
- hypotheses: 1 to 6 possible explanations the steps can confirm or rule out.
- metric: the one measure every step computes — name, expression (one SQL aggregate such as SUM(revenue)), table (dataset.table, one of the tables above), dateColumn, and an optional filter (one SQL condition).
- steps: 1 to {maxSteps} steps, each with a unique id (1, 2, …), a title and a kind:
  - compare: the metric in a base period and a current period (base, current).
  - breakdown: the metric by 1–2 dimensions (columns of the table) in one period.
  - contribution: each segment of 1–2 dimensions in the base and current period, its change and its share of the total change — the step that finds what drove a change.
  - drivers: every segment of 1–4 dimensions, alone and combined, in the base and current period, its change and how far it differs from what the overall change predicts (BigQuery's key drivers analysis) — needs a summable metric, SUM(…) or COUNT(*); its segments overlap, so they are not parts of the total.
  - trend: the metric by day, week or month over a range.
  - forecast: the metric by day, week or month over a range (the history), forecast horizon (1–24) periods on, with a 90 % interval — what the metric was expected to be.
  Periods are {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"} with "to" exclusive. Quarry writes the SQL of each step; steps run in parallel.
{errors}`;

/** Added when the planner's plan was refused: what to fix. */
export const PLAN_ERRORS_BLOCK = `Your previous plan was refused. Fix these problems and call submit_plan again:
{errors}
`;

/** The report writer: one call to `write_report`; numbers are cited, never typed. */
export const REPORT_WRITER_PROMPT = `${ROLE_REPORTER}
Question: {question}
Hypotheses: {hypotheses}
The metric is {metric}. These steps ran; each table lists its rows with their numbers (r1 is the first row):
{results}
{notDone}
Write the investigation's report by calling write_report once: a title, a summary of two or three sentences, and one section per finding with the ids of the steps it rests on.
- Never type a number. Where a figure goes, cite the result cell it comes from as {{s<step>.r<row>.<column>}}, e.g. {{s1.r1.change}}; Quarry fills in the value and its format. Dates and names come from the cells too.
- Every section rests on at least one step that has a result; cite only steps, rows and columns listed above.
- Claim a cause ("because", "driven by", "due to") only in a section that rests on a contribution, drivers or breakdown step whose cells show it.
- Say plainly what the steps do not show, and which steps were not done.
{errors}`;

/** Added when the writer's report was refused by the checker. */
export const REPORT_ERRORS_BLOCK = `Your previous report was refused by Quarry's checker. Fix every problem and call write_report again:
{errors}
`;
