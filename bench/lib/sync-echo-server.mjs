// A trivial /sync server for checking the simulator's own capacity: answers every request frame at
// once (no token check, no registry), in a process of its own. Sends its port to the parent over IPC.
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({
  port: 0,
  host: '127.0.0.1',
  path: '/sync',
  perMessageDeflate: false,
  clientTracking: false,
});
wss.on('connection', (ws) => {
  ws.on('message', (raw) => {
    const frame = JSON.parse(/** @type {Buffer} */ (raw).toString('utf8'));
    const data =
      frame.type === 'connection.open' ? { connectionId: frame.data?.connectionId ?? randomUUID(), state: 'new' } : {};
    ws.send(JSON.stringify({ type: 'result', id: frame.id, data }));
    if (frame.type === 'unregister') ws.close(1000, 'unregistered');
  });
});
wss.on('listening', () => process.send({ port: wss.address().port }));
process.on('disconnect', () => process.exit(0));
