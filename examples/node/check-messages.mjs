// Check AI SDK ModelMessages against the `ai` package's own schema, as a host would before
// passing `request/build`'s default output to generateText/streamText.
//
//   node check-messages.mjs < requests.json
//
// stdin: a JSON object {"<label>": [ModelMessage, ...], ...}; stdout: one line
// `RESULT {"checked": <messages>, "errors": [{"label", "index", "issue"}]}`.
import { modelMessageSchema } from 'ai';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;

const requests = JSON.parse(input);
const errors = [];
let checked = 0;
for (const [label, messages] of Object.entries(requests)) {
  messages.forEach((message, index) => {
    checked += 1;
    const parsed = modelMessageSchema.safeParse(message);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      errors.push({ label, index, issue: `${issue?.path?.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` });
    }
  });
}
process.stdout.write(`RESULT ${JSON.stringify({ checked, errors: errors.slice(0, 20) })}\n`);
