/** Peer-chosen text, cut short and stripped of control characters before it reaches a log. */
export function clip(text: string, max = 100): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length <= max ? clean : `${clean.slice(0, max)}…`;
}
