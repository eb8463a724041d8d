import type { ToolLoop } from 'statecraft';

export async function research(loop: ToolLoop): Promise<void> {
  for await (const event of loop.stream('Refund order 7.')) {
    if (event.type === 'record') console.log(event.record);
  }
  const result = await loop.invoke('Refund order 8.');
  console.log(result.rounds, result.toolLogs.length);
}
