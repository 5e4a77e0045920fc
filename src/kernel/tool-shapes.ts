import { toolShapes, type ToolShapes } from './parse/index'
import type { ToolRegistry } from './registry'

const cache = new WeakMap<ToolRegistry, ToolShapes>()

/** What the output parser knows of a registry's tools (their parameter types), built once. */
export function toolShapesOf(registry: ToolRegistry): ToolShapes {
  let shapes = cache.get(registry)
  if (!shapes) {
    shapes = toolShapes(
      registry.names().map((name) => ({ name, schema: registry.jsonSchema(name) })),
    )
    cache.set(registry, shapes)
  }
  return shapes
}
