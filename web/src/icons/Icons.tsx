/**
 * The page's icons, drawn as inline SVG: emoji characters show as empty boxes where no emoji font
 * is installed. Each is decorative (`aria-hidden`): the button around it carries the name.
 */
const common = {
  width: 18,
  height: 18,
  viewBox: "0 0 24 24",
  fill: "none",
  stroke: "currentColor",
  strokeWidth: 2,
  strokeLinecap: "round" as const,
  strokeLinejoin: "round" as const,
  "aria-hidden": true,
  focusable: false,
};

/** A bell (notifications). */
export function BellIcon() {
  return (
    <svg {...common} className="icon-svg" data-icon="bell">
      <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
      <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
    </svg>
  );
}

/** A paper clip (attach files). */
export function PaperclipIcon() {
  return (
    <svg {...common} className="icon-svg" data-icon="paperclip">
      <path d="m21.44 11.05-9.19 9.19a6 6 0 0 1-8.49-8.49l8.57-8.57A4 4 0 1 1 18 8.84l-8.59 8.57a2 2 0 0 1-2.83-2.83l8.49-8.48" />
    </svg>
  );
}

/** Three lines (the conversations drawer). */
export function MenuIcon() {
  return (
    <svg {...common} className="icon-svg" data-icon="menu">
      <path d="M4 6h16M4 12h16M4 18h16" />
    </svg>
  );
}
