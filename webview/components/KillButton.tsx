/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { useId, useRef, useState } from 'preact/hooks';
import type { KillTarget } from '../protocol.js';
import { useDashboard } from './context.js';

/** Kept for the page's lifetime only (never stored), so a second kill does not ask again. */
let rememberedSecret = '';

type TextField = HTMLElement & { value: string };

/**
 * Kill an application or a driver, after a confirmation in a modal dialog (which keeps the focus
 * inside it, and returns it on close). Shown only when the host allows kills; when
 * wick.authenticate is on the dialog asks for the secret, and the host checks it.
 */
export function KillButton({ target, label }: { target: KillTarget; label: string }) {
  const { source, capabilities, announce } = useDashboard();
  const dialog = useRef<HTMLDialogElement>(null);
  const secret = useRef<TextField>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const id = useId();
  if (!capabilities.killEnabled) return null;

  const open = () => {
    setError(undefined);
    dialog.current?.showModal();
    if (secret.current) secret.current.value = rememberedSecret;
  };
  const close = () => dialog.current?.close();
  const confirm = async () => {
    if (!source || busy) return;
    const given = capabilities.killNeedsSecret ? (secret.current?.value ?? '') : undefined;
    if (given === '') {
      setError('Enter the secret (wick.authenticate.secret) to kill.');
      return;
    }
    setBusy(true);
    try {
      const r = await source.kill(target, given);
      if (r.success) {
        if (given !== undefined) rememberedSecret = given;
        close();
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
        {capabilities.killNeedsSecret && (
          <div class="field">
            <vscode-label for={`${id}-secret`}>Secret (wick.authenticate.secret)</vscode-label>
            <vscode-textfield
              id={`${id}-secret`}
              ref={secret}
              type="password"
              autocomplete="off"
              onKeyDown={(e) => {
                if (e.key === 'Enter') void confirm();
              }}
            />
          </div>
        )}
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
    </>
  );
}
