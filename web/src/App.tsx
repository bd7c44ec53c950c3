/** Placeholder shell; the Web client issue builds sign-in, threads and the streaming chat. */
export function App() {
  return (
    <main>
      <h1>Quarry</h1>
      <p>Ask your data a question.</p>
    </main>
  );
}
