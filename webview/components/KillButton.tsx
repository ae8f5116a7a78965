/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useId, useRef, useState } from 'preact/hooks';
import type { KillTarget } from '../protocol.js';
import { useDashboard } from './context.js';

/**
 * Kill an application or a driver, after a confirmation in a modal dialog (which keeps the focus
 * inside it, and returns it on close). Shown only when the host allows kills. No secret is asked
 * for: with authentication on the page is logged in already (the web UI's session cookie, or the
 * extension's agent), and the host checks that.
 */
export function KillButton({ target, label }: { target: KillTarget; label: string }) {
  const { source, capabilities, announce, config } = useDashboard();
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const id = useId();
  if (!capabilities.killEnabled) return null;

  // In VS Code the extension asks (its modal names the application): one confirmation, not two.
  const inPanel = config.host === 'vscode';
  const open = () => {
    setError(undefined);
    if (inPanel) void confirm();
    else dialog.current?.showModal();
  };
  const close = () => dialog.current?.close();
  const confirm = async () => {
    if (!source || busy) return;
    setBusy(true);
    try {
      const r = await source.kill(target);
      if (r.cancelled) return;
      if (r.success) {
        close();
        announce(r.message);
      } else if (inPanel) {
        // The extension showed the failure as a notification.
        announce(r.message);
      } else {
        setError(r.message);
      }
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const what = target.kind === 'app' ? 'application' : 'driver';
  return (
    <>
      <vscode-button
        secondary
        class="kill"
        onClick={open}
        aria-haspopup="dialog"
        aria-label={`Kill ${what} ${label}`}
      >
        Kill
      </vscode-button>
      {!inPanel && (
        <dialog
          ref={dialog}
          class="dialog"
          aria-labelledby={`${id}-title`}
          aria-describedby={`${id}-desc`}
        >
          <h2 id={`${id}-title`}>
            Kill {what} {label}?
          </h2>
          <p id={`${id}-desc`}>
            {target.kind === 'app'
              ? 'Its executors are killed and the application ends as KILLED.'
              : 'Its process is killed on its worker and the driver ends as KILLED.'}
          </p>
          {error && (
            <p role="alert" class="error">
              {error}
            </p>
          )}
          <div class="dialog-buttons">
            <vscode-button onClick={() => void confirm()} disabled={busy} class="confirm-kill">
              Kill {what}
            </vscode-button>
            <vscode-button secondary onClick={close}>
              Cancel
            </vscode-button>
          </div>
        </dialog>
      )}
    </>
  );
}
