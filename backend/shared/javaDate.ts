/**
 * A time as Java's java.util.Date.toString writes it — `EEE MMM dd HH:mm:ss zzz yyyy`, e.g.
 * `Mon Dec 07 00:09:04 UTC 2026` — in the local time zone: Spark's /json writes its `submitdate`
 * fields so (ApplicationInfo.submitDate and DriverInfo.submitDate are Dates), and tools written
 * for Spark's pages parse that, not JavaScript's `Mon Dec 07 2026 00:09:04 GMT+0000 (…)`. The zone
 * is the short name Intl knows (UTC, PST, …; GMT+1 where it has no abbreviation, where Java may
 * write CET).
 */
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Made on first use: making an Intl.DateTimeFormat loads ICU's time zone data, 22 ms of CPU here,
 * which every command that imports this module (`wick submit` among them) paid at start-up.
 */
let zoneName: Intl.DateTimeFormat | undefined;

export function javaDateString(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  zoneName ??= new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });
  const zone = zoneName.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  return `${DAYS[d.getDay()]} ${MONTHS[d.getMonth()]} ${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} ${zone} ${d.getFullYear()}`;
}
