/** The job Wick: New Job writes: typed, commented, and runnable as it is. */
export function jobTemplate(appName: string, fileName: string): string {
  return `/**
 * ${appName}: a Wick job. Submit it with Wick: Submit Job… (or the Submit button in this editor's
 * title bar), or from a terminal: wick submit --master local ${fileName}
 */
import { WickContext } from 'wick';

const wc = await WickContext.create({ appName: ${JSON.stringify(appName)} });
try {
  const words = ['spark', 'wick', 'flame', 'ember', 'candle', 'torch', 'spark', 'wick'];
  // Functions given to map, filter… run on executors: what they use from outside is passed as
  // their last argument (env), here the minimum length.
  const long = await wc
    .parallelize(words, 4)
    .filter((w: string, env: { min: number }) => w.length >= env.min, { min: 5 })
    .map((w: string) => w.toUpperCase())
    .collect();
  console.log(\`Words of 5 letters or more: \${long.join(', ')}\`);

  // SparkPi: throw darts at the unit square, in 4 tasks.
  const n = 400_000;
  const inside = await wc
    .range(0, n, 1, 4)
    .map((): number => {
      const x = Math.random() * 2 - 1;
      const y = Math.random() * 2 - 1;
      return x * x + y * y <= 1 ? 1 : 0;
    })
    .reduce((a: number, b: number) => a + b);
  console.log(\`Pi is roughly \${(4 * inside) / n}\`);
} finally {
  await wc.stop();
}
`;
}
