/**
 * SparkPi on Wick: estimates π by throwing darts at the unit square, in `slices` tasks.
 *
 *   wick submit --master wick://host:7077 examples/pi.ts [slices]
 *   wick submit --master local examples/pi.ts 10      # on an embedded local cluster
 */
import { WickContext } from 'wick';

const slices = process.argv[2] ? Number(process.argv[2]) : 2;
if (!Number.isInteger(slices) || slices < 1) {
  console.error(
    `Usage: pi.ts [slices]: slices must be a whole number ≥ 1, got "${process.argv[2]}"`,
  );
  process.exit(1);
}
const n = Math.min(100_000 * slices, 2 ** 31 - 1);

const wc = await WickContext.create({ appName: 'Wick Pi' });
const count = await wc
  .range(1, n, 1, slices)
  .map((): number => {
    const x = Math.random() * 2 - 1;
    const y = Math.random() * 2 - 1;
    return x * x + y * y <= 1 ? 1 : 0;
  })
  .reduce((a, b) => a + b);
console.log(`Pi is roughly ${(4 * count) / (n - 1)}`);
await wc.stop();
