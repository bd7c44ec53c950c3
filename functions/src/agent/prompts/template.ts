/** Fills `{name}` placeholders; a missing variable is a programming error, so it throws. */
export function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`Prompt variable "${name}" has no value.`);
    return value;
  });
}
