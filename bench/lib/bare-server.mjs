// The benchmarks' baseline: a bare Node HTTP server answering every request with the JSON body in
// argv[2], in its own process (as the services are). Sends its port to the parent over IPC.
import http from 'node:http';

const body = process.argv[2];
const length = Buffer.byteLength(body);
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
