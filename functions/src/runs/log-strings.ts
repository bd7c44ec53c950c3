/**
 * Long strings in a run's event log, written once: a string of at least LONG_STRING characters (an
 * image in the question, which every `values` event repeats) is stored where it first appears, and
 * each later occurrence as a reference (MARK + "ref:" + its index in order of first appearance); a
 * string that itself began with MARK is escaped (MARK + "lit:" + it). The writer and the reader
 * meet the long strings in the same order: document order, event after event.
 */

/** Strings at least this long are written once in a run's log; a later occurrence refers to the first. */
const LONG_STRING = 32 * 1024;
const MARK = "\u0000log:";
const REF = `${MARK}ref:`;
const LIT = `${MARK}lit:`;
/** MARK as it appears in JSON (a string starting with it), as text and as bytes. */
const MARK_JSON = JSON.stringify(MARK).slice(0, -1);
const MARK_BYTES = Buffer.from(MARK_JSON, "utf8");

/** The writer's side: an event's JSON as the log stores it. */
export class LongStringWriter {
  /** Long strings seen in this log, with their index. */
  private readonly seen = new Map<string, number>();

  /** `json` (which is `data`'s), or `data` again with each long string already logged as a reference. */
  logged(json: string, data: unknown): string {
    // Only an event this long can hold a long string; MARK_JSON is rare in any event.
    if (json.length < LONG_STRING && !json.includes(MARK_JSON)) return json;
    return JSON.stringify(data, (_key, v: unknown) => {
      if (typeof v !== "string") return v;
      if (v.startsWith(MARK)) return LIT + v;
      if (v.length < LONG_STRING) return v;
      const known = this.seen.get(v);
      if (known !== undefined) return REF + known;
      this.seen.set(v, this.seen.size);
      return v;
    });
  }
}

/** The reader's side: one logged line parsed, its references resolved. Lines must come in log order. */
export class LongStringReader {
  /** Long strings read so far, in the order the writer first wrote them. */
  private readonly seen: string[] = [];
  /** Leaves are revived in document order, the order the writer's replacer met them in. */
  private readonly reviver = (_key: string, v: unknown): unknown => {
    if (typeof v !== "string") return v;
    if (v.startsWith(REF)) {
      const long = this.seen[Number(v.slice(REF.length))];
      if (long === undefined)
        throw new Error(`the run's log refers to a string it does not hold (${v.slice(1)})`);
      return long;
    }
    if (v.startsWith(LIT)) return v.slice(LIT.length);
    if (v.length >= LONG_STRING) this.seen.push(v);
    return v;
  };

  parse(line: Buffer): unknown {
    // A string of n characters takes at least n bytes: a shorter line holds no long string.
    const revive = line.length >= LONG_STRING || line.includes(MARK_BYTES);
    const text = line.toString("utf8");
    return revive ? JSON.parse(text, this.reviver) : JSON.parse(text);
  }
}
