/** Saves a file the page made (CSV text, a chart's PNG or SVG) through a temporary link. */

/** Saves the resource at `url` (a data: or blob: URL) as `name`. */
export function saveUrl(url: string, name: string): void {
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

/** Saves CSV text as `name`, with a BOM so spreadsheet apps read it as UTF-8. */
export function saveCsv(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob(["\uFEFF", text], { type: "text/csv;charset=utf-8" }));
  saveUrl(url, name);
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
