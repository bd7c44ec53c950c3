/**
 * Proposals: verified queries proposed by up-votes on answers that ran SQL. An admin edits the
 * question and the SQL, then approves (the SQL must pass the warehouse's dry run; the API's reason
 * is shown when it does not) or rejects. Approved ones are used by the agent within a minute.
 */
import { useCallback, useState } from "react";
import type { ProposalView as Proposal } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useAction, useLoad } from "./useLoad";

export function ProposalsSection({ api }: { api: AdminApi }) {
  const load = useCallback(() => api.proposals(), [api]);
  const { data, error, loading, reload } = useLoad(load);
  return (
    <section id="proposals" className="admin-section" aria-labelledby="proposals-title">
      <div className="section-head">
        <h3 id="proposals-title">Proposals</h3>
        <button type="button" onClick={() => void reload()} disabled={loading}>
          Refresh proposals
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.proposals.length === 0 && <p className="muted">No proposals waiting.</p>}
      <ul className="proposal-list" aria-label="Proposals">
        {data?.proposals.map((p) => (
          <ProposalCard key={p.id} api={api} proposal={p} onDone={reload} />
        ))}
      </ul>
    </section>
  );
}

interface CardProps {
  api: AdminApi;
  proposal: Proposal;
  onDone: () => Promise<void>;
}

function ProposalCard({ api, proposal, onDone }: CardProps) {
  const [question, setQuestion] = useState(proposal.question);
  const [sql, setSql] = useState(proposal.sql ?? "");
  const [error, busy, run] = useAction();
  const edited = question !== proposal.question || sql !== (proposal.sql ?? "");
  const act = async (fn: () => Promise<unknown>) => {
    if (await run(fn)) await onDone();
  };
  const save = () => (edited ? api.editProposal(proposal.id, { question, sql }) : Promise.resolve());
  const approve = () =>
    act(async () => {
      await save();
      await api.approve(proposal.id);
    });
  const qId = `proposal-${proposal.id}-question`;
  const sqlId = `proposal-${proposal.id}-sql`;
  return (
    <li className="proposal" data-proposal-id={proposal.id} aria-label={`Proposal: ${proposal.question}`}>
      <label htmlFor={qId}>Question</label>
      <input id={qId} value={question} onChange={(e) => setQuestion(e.target.value)} />
      <label htmlFor={sqlId}>SQL</label>
      <textarea id={sqlId} rows={5} spellCheck={false} value={sql} onChange={(e) => setSql(e.target.value)} />
      {proposal.note && <p className="small">Note: {proposal.note}</p>}
      {proposal.answer && <p className="muted small proposal-answer">Answer given: {proposal.answer}</p>}
      <div className="proposal-actions">
        <button type="button" disabled={busy || !edited} onClick={() => void act(save)}>
          Save changes
        </button>
        <button type="button" className="primary" disabled={busy} onClick={() => void approve()}>
          Approve
        </button>
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => void act(() => api.reject(proposal.id))}
        >
          Reject
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}
