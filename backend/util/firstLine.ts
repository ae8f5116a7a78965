/**
 * The first line a stream carries (without its newline); undefined when the stream ends or fails
 * before one. The stream is destroyed once it is read: nothing after the line is wanted.
 */
export function firstLine(
  stream: NodeJS.ReadableStream & { destroy(): void },
): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const done = (line: string | undefined) => {
      stream.removeAllListeners('data');
      stream.destroy();
      resolve(line);
    };
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const nl = text.indexOf('\n');
      if (nl >= 0) done(text.slice(0, nl));
    });
    stream.once('end', () => done(undefined));
    stream.once('error', () => done(undefined));
  });
}
