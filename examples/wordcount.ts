/**
 * WordCount on Wick: the 20 most frequent words of a text file, by a shuffle (reduceByKey) and a
 * sort (sortBy, a range-partitioned shuffle), as Spark's JavaWordCount.
 *
 *   wick submit --master local examples/wordcount.ts <file> [partitions]
 */
import { WickContext } from 'wick';

const file = process.argv[2];
if (!file) {
  console.error('Usage: wordcount.ts <file> [partitions]');
  process.exit(1);
}
const partitions = process.argv[3] ? Number(process.argv[3]) : undefined;

const wc = await WickContext.create({ appName: 'Wick WordCount' });
const top = await wc
  .textFile(file, partitions)
  .flatMap((line: string) => line.split(/\s+/))
  .filter((w) => w.length > 0)
  .map((w): [string, number] => [w, 1])
  .reduceByKey((a, b) => a + b)
  .sortBy(([, n]) => n, false)
  .take(20);
for (const [word, n] of top) console.log(`${word}: ${n}`);
await wc.stop();
