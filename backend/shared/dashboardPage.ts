/**
 * The one HTML page of the dashboard, for the web UIs and (through `cspSource`) for VS Code's
 * webview panel: the bundle's script by nonce, its stylesheet, the configuration as a JSON data
 * block, and a Content-Security-Policy that allows nothing else — no inline script or style, no
 * eval, no other origin. Pure, so that the extension builds its panel from the same page.
 */

export interface PageOptions<C extends { readonly host: string }> {
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** The page's configuration, as JSON; its `host` also marks the body (panel or browser). */
  config: C;
  title: string;
  /** VS Code's webview.cspSource; the web UI serves everything from its own origin ('self'). */
  cspSource?: string;
}

/** The policy; `forMeta` leaves out frame-ancestors, which browsers ignore (with an error) in a meta tag. */
export function contentSecurityPolicy(
  nonce: string,
  cspSource = "'self'",
  forMeta = false,
): string {
  const policy = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `connect-src ${cspSource}`,
    "base-uri 'none'",
    "form-action 'none'",
  ];
  if (!forMeta) policy.push("frame-ancestors 'none'");
  return policy.join('; ');
}

export function dashboardHtml<C extends { readonly host: string }>(o: PageOptions<C>): string {
  // In a data block, "<" is escaped so that no value can close the element.
  const config = JSON.stringify(o.config).replace(/</g, '\\u003c');
  // The web UI also sends the policy as a header, with frame-ancestors.
  const csp = contentSecurityPolicy(o.nonce, o.cspSource, true);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeText(o.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeAttr(o.styleUri)}">
</head>
<body data-host="${o.config.host}">
<div id="app"></div>
<script type="application/json" id="wick-config">${config}</script>
<script nonce="${escapeAttr(o.nonce)}" src="${escapeAttr(o.scriptUri)}"></script>
</body>
</html>
`;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}
