/**
 * A cursor over one query-string value. Every parse error says which parameter, where in it
 * (1-based column) and what was expected, so a caller can fix the request without guessing.
 */
import { ApiError } from '../errors.ts';

export class Scanner {
  pos = 0;

  constructor(
    readonly input: string,
    /** What is being parsed, for messages: "filter", "select", "order", "logic tree"... */
    readonly what: string,
    /** The parameter as the caller wrote it (`name=value`), for messages. */
    readonly shown: string = input,
    /** Where `input` starts inside `shown`, so columns point into what the caller wrote. */
    readonly offset = 0,
  ) {}

  get done(): boolean {
    return this.pos >= this.input.length;
  }

  peek(n = 0): string {
    return this.input[this.pos + n] ?? '';
  }

  startsWith(text: string): boolean {
    return this.input.startsWith(text, this.pos);
  }

  /** Consumes `text` if it is next. */
  eat(text: string): boolean {
    if (!this.startsWith(text)) return false;
    this.pos += text.length;
    return true;
  }

  expect(text: string, expected = `"${text}"`): void {
    if (!this.eat(text)) throw this.error(expected);
  }

  skipSpaces(): void {
    while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\n' || this.peek() === '\r') this.pos++;
  }

  /** Consumes characters while `test` holds and returns them. */
  takeWhile(test: (c: string) => boolean): string {
    const start = this.pos;
    while (!this.done && test(this.peek())) this.pos++;
    return this.input.slice(start, this.pos);
  }

  rest(): string {
    const text = this.input.slice(this.pos);
    this.pos = this.input.length;
    return text;
  }

  /** `"..."` with `\x` standing for `x`; the scanner must be on the opening quote. */
  quoted(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      if (this.done) throw this.error("a closing '\"'");
      const c = this.input[this.pos++]!;
      if (c === '"') return out;
      if (c === '\\' && !this.done) out += this.input[this.pos++];
      else out += c;
    }
  }

  expectEnd(expected: string): void {
    if (!this.done) throw this.error(expected);
  }

  error(expected: string): ApiError {
    const found = this.done ? 'end of input' : `"${this.peek()}"`;
    const column = this.offset + this.pos + 1;
    return new ApiError(
      'INVALID_QUERY',
      `failed to parse ${this.what} (${this.shown}) at column ${column}: expected ${expected}, found ${found}`,
      {
        details: `unexpected ${found} at column ${column}, expecting ${expected}`,
        context: { parameter: this.shown, column, expected, found },
      },
    );
  }
}
