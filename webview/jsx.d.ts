// The VS Code–styled web components the dashboard uses (@vscode-elements/elements), for JSX.
import 'preact';

type El = import('preact').HTMLAttributes<HTMLElement>;

declare module 'preact' {
  namespace JSX {
    interface IntrinsicElements {
      'vscode-badge': El & {
        variant?: 'default' | 'counter' | 'activity-bar-counter' | 'tab-header-counter';
      };
      'vscode-button': El & { secondary?: boolean; disabled?: boolean; icon?: string };
      'vscode-label': El & { for?: string; required?: boolean };
      'vscode-textfield': El & {
        type?: string;
        name?: string;
        placeholder?: string;
        autocomplete?: string;
        required?: boolean;
      };
      'vscode-progress-ring': El;
    }
  }
}
