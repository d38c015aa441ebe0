export const meta = {
  name: "coordinate-flow",
  description: "Classify a request and run it as a flowstate workflow, with parallel workers and sub-supervisors for large phases",
};

// A flowstate workflow run as a Claude Code workflow. flowstate decides
// every step: the script asks the step agent for it, and flowstate's
// PreToolUse hook answers the agent's StructuredOutput call with the
// step (the workers to run, each with the prompt the command's task
// block gives, or how the workflow ended). This loop decides nothing.
// Written by flowstate (go run ./docs/gen, from lib/scaffold); do not edit.
const STEP_AGENT = "flowstate:flowstate-step";

async function step(kind) {
  const task = `FLOWSTATE_STEP kind=${kind} workflow=${args.workflow} launch=${args.launch}`;
  try {
    return await agent(task, {agentType: STEP_AGENT, schema: {type: 'object'}, label: `flowstate ${kind}`, model: 'haiku'});
  } catch (e) {
    return {next: 'failed', message: `the ${kind} step got no answer from flowstate: ${e}`};
  }
}

function worker(w) {
  const options = {agentType: w.agentType, label: w.label, phase: w.phase};
  if (w.isolation) options.isolation = w.isolation;
  return () => agent(w.prompt, options);
}

if (!args || typeof args.workflow !== 'string' || typeof args.launch !== 'string') {
  return {status: 'failed', message: 'launch this workflow with the args flowstate printed, {"workflow": ..., "launch": ...}'};
}
let r = await step('plan');
for (let waves = 0; r && r.next === 'work' && Array.isArray(r.workers) && waves < 400; waves++) {
  await parallel(r.workers.map(worker));
  r = await step('verify');
}
if (!r || typeof r.next !== 'string') {
  return {status: 'failed', message: "flowstate's hooks did not answer this workflow's steps in this session"};
}
return {status: r.next, state: r.state, message: r.message};
