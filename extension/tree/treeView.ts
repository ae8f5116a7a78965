/**
 * The vscode side of the tree: a TreeDataProvider per view over the pure mapping in model.ts.
 * Pushed state lands in `update`, and the views refresh after a short debounce (the Kubernetes
 * extension's queueRefresh); stable TreeItem ids keep expansion and selection across refreshes.
 */
import * as vscode from 'vscode';
import { children, item, type Model, type Node, roots, type ViewId } from './model.js';
import type { Item } from './nodes/item.js';

export class WickTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly parents = new WeakMap<Node, Node>();
  private readonly ids = new WeakMap<Node, string>();
  /** The children last handed to the view, by parent: the instances the view knows. */
  private shown = new Map<Node | undefined, Node[]>();
  /** Resolves the next time the roots are read (the tree benchmark and tests wait on it). */
  private rendered: (() => void)[] = [];

  constructor(
    readonly view: ViewId,
    private readonly model: () => Model,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  nextRender(): Promise<void> {
    return new Promise((r) => this.rendered.push(r));
  }

  getChildren(node?: Node): Node[] {
    const m = this.model();
    const kids = node ? children(node, m) : roots(this.view, m);
    for (const k of kids) if (node) this.parents.set(k, node);
    // A read of the roots starts a new render: the view forgets the instances it had.
    if (!node) this.shown = new Map();
    this.shown.set(node, kids);
    if (!node) {
      const done = this.rendered;
      this.rendered = [];
      for (const r of done) r();
    }
    return kids;
  }

  /**
   * The instance of a node the view was last given, if it was: revealing that one needs no
   * re-fetch by the view, which a concurrent refresh can make fail.
   */
  shownNode(pred: (n: Node) => boolean): Node | undefined {
    for (const kids of this.shown.values()) for (const k of kids) if (pred(k)) return k;
    return undefined;
  }

  getParent(node: Node): Node | undefined {
    return this.parents.get(node);
  }

  setParent(node: Node, parent: Node): void {
    this.parents.set(node, parent);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const parent = this.parents.get(node);
    const it = item(node, this.model(), parent ? this.ids.get(parent) : '');
    this.ids.set(node, it.id);
    return toTreeItem(it);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function toTreeItem(it: Item): vscode.TreeItem {
  const t = new vscode.TreeItem(
    it.label,
    it.collapsible === 'none'
      ? vscode.TreeItemCollapsibleState.None
      : it.collapsible === 'expanded'
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed,
  );
  t.id = it.id;
  if (it.description !== undefined) t.description = it.description;
  if (it.tooltip !== undefined) t.tooltip = it.tooltip;
  t.contextValue = it.contextValue;
  if (it.icon)
    t.iconPath = new vscode.ThemeIcon(
      it.icon.id,
      it.icon.color ? new vscode.ThemeColor(it.icon.color) : undefined,
    );
  if (it.command) t.command = it.command;
  return t;
}
