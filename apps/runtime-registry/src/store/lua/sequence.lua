-- rtSequence: several application script runs of ONE application in one run, each as on its own,
-- until the first that fails. KEYS: the application's base key, the runs' second keys, the journal.
-- args.ops: [{ s = script name, p = its arguments, k = the index in KEYS of its second key }].
local sequence_scripts = {
  rtRegister = register_client,
  rtJoin = join_channel,
  rtOpen = open_connection,
  rtConnState = change_connection_state,
}
local answers = {}
local previous_client
for i, op in ipairs(cjson.decode(ARGV[1]).ops) do
  local result = sequence_scripts[op.s](op.p, KEYS[op.k])
  answers[i] = result
  if result.fail then break end
  -- A client hash read once in this run (read_client) goes back once: later answers say `client = 1`.
  if result.client ~= nil and result.client == previous_client then
    result.client = 1
  elseif result.client ~= nil then
    previous_client = result.client
  end
end
local answer = cjson.encode(answers)
if answers[1] and not answers[1].fail then journal(answer) end
return answer
