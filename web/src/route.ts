/** The open thread lives in the URL (`/t/<id>`), so a reload or a shared link reopens it. */
import { useCallback, useEffect, useState } from "react";

const PATTERN = /^\/t\/([0-9A-Za-z-]{1,128})\/?$/;

function threadFromPath(path: string): string | null {
  return PATTERN.exec(path)?.[1] ?? null;
}

export function useThreadRoute(): [string | null, (id: string | null, replace?: boolean) => void] {
  const [id, setId] = useState(() => threadFromPath(window.location.pathname));
  useEffect(() => {
    const onPop = () => setId(threadFromPath(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const go = useCallback((next: string | null, replace = false) => {
    const path = next ? `/t/${next}` : "/";
    if (window.location.pathname !== path) {
      if (replace) window.history.replaceState(null, "", path);
      else window.history.pushState(null, "", path);
    }
    setId(next);
  }, []);
  return [id, go];
}
