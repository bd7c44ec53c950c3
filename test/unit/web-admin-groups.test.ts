/**
 * The admin page's Groups section and a member's group picker, rendered in jsdom against an
 * in-memory admin API: the rule line follows whether any group exists, creating sends the datasets
 * as entries, the server's refusal is shown in its words, datasets are changed and a group deleted
 * (only after the confirmation), and ticking a group saves the member's whole list.
 */
import { JSDOM } from "jsdom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Group, Member, NewGroup } from "../../functions/src/contract";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
Object.assign(globalThis, { window: dom.window, document: dom.window.document });
const { render, screen, fireEvent, waitFor, cleanup, within } = await import("@testing-library/react");
const { createElement, useReducer } = await import("react");
const { GroupsSection } = await import("../../web/src/admin/Groups");
const { MemberGroups } = await import("../../web/src/admin/MemberGroups");
type AdminApi = import("../../web/src/admin/api").AdminApi;

afterEach(() => cleanup());

/** An error as the page's API client throws one for a 400 with the server's body. */
function apiError(status: number, error: string, message: string): Error {
  return Object.assign(new Error(`HTTP ${status}: ${JSON.stringify({ error, message })}`), { status });
}

/** The groups routes over a list in memory; only `shop` and its tables exist. */
function fakeApi() {
  const groups: Group[] = [];
  const known = (d: string) => d === "shop" || d.startsWith("shop.");
  const check = (datasets: string[]) => {
    const unknown = datasets.filter((d) => !known(d));
    if (unknown.length) {
      throw apiError(
        400,
        "bad_request:body",
        `The warehouse has no ${unknown.join(", ")}. Its datasets: shop.`,
      );
    }
  };
  const api = {
    groups: vi.fn(async () => ({ groups: structuredClone(groups) })),
    createGroup: vi.fn(async (g: NewGroup) => {
      check(g.datasets);
      const made: Group = {
        ...g,
        members: ["ann@example.com"],
        createdBy: "boss@example.com",
        createdAt: "2026-11-25T10:00:00.000Z",
        updatedAt: "2026-11-25T10:00:00.000Z",
      };
      groups.push(made);
      return made;
    }),
    updateGroup: vi.fn(async (name: string, datasets: string[]) => {
      check(datasets);
      const g = groups.find((x) => x.name === name)!;
      Object.assign(g, { datasets, updatedAt: new Date().toISOString() });
      return g;
    }),
    removeGroup: vi.fn(async (name: string) => {
      groups.splice(
        groups.findIndex((g) => g.name === name),
        1,
      );
    }),
  };
  return api;
}

/** The section as the admin page mounts it: a change bumps the version, which reloads the list. */
function Harness({ api }: { api: AdminApi }) {
  const [version, changed] = useReducer((v: number) => v + 1, 0);
  return createElement(GroupsSection, { api, version, onChanged: changed });
}

function renderSection() {
  const api = fakeApi();
  render(createElement(Harness, { api: api as unknown as AdminApi }));
  return api;
}

const rows = () => screen.queryAllByRole("listitem").map((li) => li.getAttribute("data-group"));

describe("the Groups section", () => {
  it("with none, says every member sees every dataset; creating one sends its entries and lists it", async () => {
    const api = renderSection();
    await screen.findByText(/No groups yet: every member sees every allowed dataset/);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "finance" } });
    fireEvent.change(screen.getByLabelText("Datasets"), {
      target: { value: " shop,shop.orders  shop.customers, " },
    });
    fireEvent.submit(screen.getByRole("form", { name: "Create a group" }));
    await waitFor(() => expect(rows()).toEqual(["finance"]));
    expect(api.createGroup).toHaveBeenCalledWith({
      name: "finance",
      datasets: ["shop", "shop.orders", "shop.customers"],
    });
    const row = within(screen.getByRole("listitem"));
    expect((row.getByRole("textbox", { name: "Datasets of finance" }) as HTMLInputElement).value).toBe(
      "shop, shop.orders, shop.customers",
    );
    expect(row.getByText(/Members: ann@example.com/)).toBeTruthy();
    // The rule changed with the first group.
    expect(screen.getByText(/a member in no group sees no data/)).toBeTruthy();
    expect(screen.queryByText(/No groups yet/)).toBeNull();
    // The form is empty again for the next one.
    expect((screen.getByLabelText("Name") as HTMLInputElement).value).toBe("");
  });

  it("shows the server's refusal in its words and keeps what was typed", async () => {
    renderSection();
    await screen.findByText(/No groups yet/);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "hr" } });
    fireEvent.change(screen.getByLabelText("Datasets"), { target: { value: "people" } });
    fireEvent.submit(screen.getByRole("form", { name: "Create a group" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("The warehouse has no people. Its datasets: shop.");
    expect((screen.getByLabelText("Datasets") as HTMLInputElement).value).toBe("people");
    expect(rows()).toEqual([]);
  });

  it("changes a group's datasets, and deletes it only once confirmed", async () => {
    const api = renderSection();
    await screen.findByText(/No groups yet/);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "ops" } });
    fireEvent.change(screen.getByLabelText("Datasets"), { target: { value: "shop.orders" } });
    fireEvent.submit(screen.getByRole("form", { name: "Create a group" }));
    const input = (await screen.findByRole("textbox", { name: "Datasets of ops" })) as HTMLInputElement;
    fireEvent.change(input, { target: { value: "shop" } });
    fireEvent.click(screen.getByRole("button", { name: "Save datasets of ops" }));
    await waitFor(() => expect(api.updateGroup).toHaveBeenCalledWith("ops", ["shop"]));
    await waitFor(() => expect(api.groups).toHaveBeenCalledTimes(3)); // first load, after create, after save
    expect((screen.getByRole("textbox", { name: "Datasets of ops" }) as HTMLInputElement).value).toBe("shop");

    const confirm = vi.fn(() => false);
    dom.window.confirm = confirm;
    fireEvent.click(screen.getByRole("button", { name: "Delete ops" }));
    expect(confirm).toHaveBeenCalledWith("Delete the group ops? Its 1 member(s) leave it.");
    expect(api.removeGroup).not.toHaveBeenCalled();
    confirm.mockReturnValue(true);
    fireEvent.click(screen.getByRole("button", { name: "Delete ops" }));
    await waitFor(() => expect(rows()).toEqual([]));
    expect(api.removeGroup).toHaveBeenCalledWith("ops");
    expect(screen.getByText(/No groups yet/)).toBeTruthy();
  });
});

describe("reloads that answer out of order", () => {
  it("an earlier reload answering last never brings back a deleted group", async () => {
    const api = renderSection();
    await screen.findByText(/No groups yet/);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "ops" } });
    fireEvent.change(screen.getByLabelText("Datasets"), { target: { value: "shop" } });
    fireEvent.submit(screen.getByRole("form", { name: "Create a group" }));
    await screen.findByRole("textbox", { name: "Datasets of ops" });
    // The reload after the save is held (another instance, slower), and answers with the group.
    let answerLate: () => void = () => {};
    const list = api.groups.getMockImplementation()!;
    api.groups.mockImplementationOnce(async () => {
      const stale = await list();
      await new Promise<void>((r) => (answerLate = r));
      return stale;
    });
    fireEvent.click(screen.getByRole("button", { name: "Save datasets of ops" }));
    await waitFor(() => expect(api.groups).toHaveBeenCalledTimes(3));
    dom.window.confirm = vi.fn(() => true);
    fireEvent.click(screen.getByRole("button", { name: "Delete ops" }));
    await waitFor(() => expect(rows()).toEqual([]));
    answerLate(); // the older list, with the group, arrives last
    await new Promise((r) => setTimeout(r, 0));
    await waitFor(() => expect(api.groups).toHaveBeenCalledTimes(4));
    expect(rows()).toEqual([]);
    expect(screen.getByText(/No groups yet/)).toBeTruthy();
  });
});

describe("a member's groups", () => {
  const member: Member = {
    email: "ann@example.com",
    role: "member",
    groups: ["analysts"],
    addedBy: "boss@example.com",
    addedAt: "2026-11-25T10:00:00.000Z",
    updatedAt: "2026-11-25T10:00:00.000Z",
  };

  it("ticking or clearing a group saves the member's whole list", () => {
    const onSave = vi.fn(async () => {});
    const groups = ["analysts", "finance", "web"];
    render(createElement(MemberGroups, { member, groups, busy: false, onSave }));
    expect(screen.getByText("Sees the datasets of these groups.")).toBeTruthy();
    fireEvent.click(screen.getByRole("checkbox", { name: "web" }));
    expect(onSave).toHaveBeenLastCalledWith(["analysts", "web"]);
    fireEvent.click(screen.getByRole("checkbox", { name: "analysts" }));
    expect(onSave).toHaveBeenLastCalledWith([]);
  });

  it("says what the member sees: nothing in no group, everything with no group defined or as an admin", () => {
    const save = async () => {};
    const { rerender } = render(
      createElement(MemberGroups, {
        member: { ...member, groups: [] },
        groups: ["a"],
        busy: false,
        onSave: save,
      }),
    );
    expect(screen.getByText("In no group: sees no data.")).toBeTruthy();
    rerender(createElement(MemberGroups, { member, groups: [], busy: false, onSave: save }));
    expect(screen.getByText("No groups are defined: sees every allowed dataset.")).toBeTruthy();
    expect(screen.queryAllByRole("checkbox")).toEqual([]);
    rerender(
      createElement(MemberGroups, {
        member: { ...member, role: "admin" },
        groups: ["a"],
        busy: false,
        onSave: save,
      }),
    );
    expect(screen.getByText(/An admin sees every dataset/)).toBeTruthy();
  });
});
