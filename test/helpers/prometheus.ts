/**
 * Prometheus' text format read back by a parser that is not ours (parse-prometheus-text-format, a
 * port of Prometheus' prom2json, which throws on a line it cannot read), and queried by name and
 * labels as a PromQL selector would.
 */
import assert from 'node:assert/strict';
import parse from 'parse-prometheus-text-format';

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: { labels: Record<string, string>; value: number }[];
}

export class Scrape {
  readonly families = new Map<string, Family>();

  constructor(readonly text: string) {
    for (const f of parse(text)) {
      // A family written twice would be two families to prom2json, and an error to Prometheus.
      assert.ok(!this.families.has(f.name), `${f.name} is written twice`);
      this.families.set(f.name, {
        name: f.name,
        help: f.help,
        type: f.type,
        samples: f.metrics.map((m) => {
          const value = Number(m.value);
          assert.ok(Number.isFinite(value), `${f.name} has the value ${m.value}`);
          return { labels: m.labels ?? {}, value };
        }),
      });
    }
  }

  family(name: string): Family {
    const f = this.families.get(name);
    assert.ok(f, `no ${name} among ${[...this.families.keys()].join(', ')}`);
    return f;
  }

  /** The samples of `name` whose labels include `labels`. */
  samples(name: string, labels: Record<string, string> = {}): Family['samples'] {
    return this.family(name).samples.filter((s) =>
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
  }

  /** The one value of `name` with `labels`; fails unless exactly one sample matches. */
  value(name: string, labels: Record<string, string> = {}): number {
    const found = this.samples(name, labels);
    assert.equal(found.length, 1, `${name}${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
    return (found[0] as { value: number }).value;
  }
}
