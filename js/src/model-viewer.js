// The model preview of `gamepak serve`: a glTF binary (the server converts JOE models) shown
// with orbit and zoom. Bundled with three.js by esbuild into src/gamepak/web/static/, so the
// page loads it from the server itself (the Content-Security-Policy allows nothing else).
import {
  AmbientLight,
  Box3,
  Color,
  DirectionalLight,
  DoubleSide,
  HemisphereLight,
  MathUtils,
  MeshStandardMaterial,
  PerspectiveCamera,
  Raycaster,
  Scene,
  Vector2,
  Vector3,
  WebGLRenderer,
} from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";

// A model whose smallest extent is under this share of its largest is flat (a road strip, a
// decal, a wheel disc, a sign): it is looked at face on, not edge on.
const FLAT_SHARE = 0.12;
// The share of the picture's height (and width) the model's bounds fill at first.
const FILL = 0.86;

function say(holder, text) {
  const status = holder.querySelector(".model-status");
  if (status) status.textContent = text;
  holder.dataset.state = text;
}

function viewDirection(size) {
  // Where the camera looks from (glTF: Y up), by the shape of the model's bounds.
  const extents = [size.x, size.y, size.z];
  const largest = Math.max(...extents) || 1;
  const thin = extents.indexOf(Math.min(...extents));
  if (extents[thin] < FLAT_SHARE * largest) {
    if (thin === 1) {
      // Lying flat: from above (steeply, so orbiting keeps Y up), the long side across.
      return size.x >= size.z ? new Vector3(0.12, 1, 0.45) : new Vector3(0.45, 1, 0.12);
    }
    // Standing flat (a wheel disc, a sign): face on, a little from above and the side.
    return thin === 0 ? new Vector3(1, 0.35, 0.3) : new Vector3(0.3, 0.35, 1);
  }
  // An elevated three-quarter view.
  return new Vector3(1, 0.75, 1.15);
}

function worldPoints(object, limit) {
  // Up to about `limit` of the model's vertices, in world space (every n-th one of a big model).
  const meshes = [];
  let total = 0;
  object.traverse((node) => {
    if (node.isMesh && node.geometry.attributes.position) {
      meshes.push(node);
      total += node.geometry.attributes.position.count;
    }
  });
  const stride = Math.max(1, Math.ceil(total / limit));
  const points = [];
  for (const mesh of meshes) {
    const positions = mesh.geometry.attributes.position;
    for (let index = 0; index < positions.count; index += stride) {
      points.push(new Vector3().fromBufferAttribute(positions, index).applyMatrix4(mesh.matrixWorld));
    }
  }
  return points;
}

function frame(camera, controls, object) {
  // Fit the model in the picture, whatever its units (games' models range from centimetres to
  // kilometres): seen from the direction its shape calls for, the camera moves along and
  // across that direction until the model's vertices fill FILL of the view, centred.
  const box = new Box3().setFromObject(object);
  if (box.isEmpty()) return;
  const centre = box.getCenter(new Vector3());
  const size = box.getSize(new Vector3());
  const radius = size.length() / 2 || 1;
  const back = viewDirection(size).normalize();
  const right = new Vector3().crossVectors(back.clone().negate(), camera.up).normalize();
  const up = new Vector3().crossVectors(right, back.clone().negate()).normalize();
  const tanV = Math.tan(MathUtils.degToRad(camera.fov / 2)) * FILL;
  const tanH = tanV * camera.aspect;
  const points = worldPoints(object, 20000).map((point) => {
    const relative = point.sub(centre);
    return [relative.dot(right), relative.dot(up), relative.dot(back)];
  });
  if (points.length === 0) return;
  let distance = radius / Math.min(tanH, tanV) + radius; // far enough to start with
  let across = 0;
  let upward = 0;
  for (let step = 0; step < 6; step += 1) {
    let left = Infinity, rightmost = -Infinity, low = Infinity, high = -Infinity;
    for (const [x, y, z] of points) {
      const depth = Math.max(distance - z, radius * 1e-3);
      const u = (x - across) / (depth * tanH);
      const v = (y - upward) / (depth * tanV);
      left = Math.min(left, u);
      rightmost = Math.max(rightmost, u);
      low = Math.min(low, v);
      high = Math.max(high, v);
    }
    across += ((left + rightmost) / 2) * distance * tanH;
    upward += ((low + high) / 2) * distance * tanV;
    const spread = Math.max(rightmost - left, high - low) / 2;
    if (!(spread > 0)) break;
    // The picture's size goes about inversely with the distance to the model's depth.
    distance = Math.max(distance * spread, radius * 0.05);
  }
  const target = centre.clone().addScaledVector(right, across).addScaledVector(up, upward);
  camera.near = Math.max((distance - radius) * 0.5, radius / 1000);
  camera.far = (distance + radius) * 20;
  camera.position.copy(target).addScaledVector(back, distance);
  camera.lookAt(target);
  camera.updateProjectionMatrix();
  controls.target.copy(target);
  controls.maxDistance = (distance + radius) * 10;
  controls.update();
}

function faceNormalsOutward(geometry) {
  // Turn a mesh whose faces are wound against its normals (VDrift's cars are wound clockwise)
  // so that the side its normals show is the front: lit from the side it is seen from.
  const normals = geometry.attributes.normal;
  const positions = geometry.attributes.position;
  if (!normals || !positions) return;
  const index = geometry.index;
  const count = index ? index.count : positions.count;
  const corner = (i) => (index ? index.getX(i) : i);
  const a = new Vector3(), b = new Vector3(), c = new Vector3(), summed = new Vector3(), n = new Vector3();
  let agreeing = 0;
  for (let i = 0; i + 2 < count; i += 3) {
    a.fromBufferAttribute(positions, corner(i));
    b.fromBufferAttribute(positions, corner(i + 1));
    c.fromBufferAttribute(positions, corner(i + 2));
    n.crossVectors(b.sub(a), c.sub(a));
    summed.fromBufferAttribute(normals, corner(i));
    summed.add(a.fromBufferAttribute(normals, corner(i + 1))).add(a.fromBufferAttribute(normals, corner(i + 2)));
    agreeing += Math.sign(n.dot(summed));
  }
  if (agreeing >= 0) return;
  if (index) {
    for (let i = 0; i + 2 < count; i += 3) {
      const second = index.getX(i + 1);
      index.setX(i + 1, index.getX(i + 2));
      index.setX(i + 2, second);
    }
    index.needsUpdate = true;
  } else {
    for (const attribute of Object.values(geometry.attributes)) {
      for (let i = 0; i + 2 < count; i += 3) {
        for (let k = 0; k < attribute.itemSize; k += 1) {
          const second = attribute.array[(i + 1) * attribute.itemSize + k];
          attribute.array[(i + 1) * attribute.itemSize + k] = attribute.array[(i + 2) * attribute.itemSize + k];
          attribute.array[(i + 2) * attribute.itemSize + k] = second;
        }
      }
      attribute.needsUpdate = true;
    }
  }
}

function sceneControls(holder, root, canvas, camera) {
  // A whole track or car: toggles for the skybox and the transparent objects, and the name of
  // the object under the pointer (as list.txt or the .car file names it).
  const skybox = root.getObjectByName("skybox");
  const transparent = [];
  root.traverse((node) => {
    if (node.isMesh && node.material && node.material.transparent) transparent.push(node);
  });
  const section = holder.closest("section") || document;
  for (const box of section.querySelectorAll("input[data-toggle]")) {
    const targets = box.dataset.toggle === "skybox" ? (skybox ? [skybox] : []) : transparent;
    box.disabled = targets.length === 0;
    box.addEventListener("change", () => {
      for (const target of targets) target.visible = box.checked;
    });
  }
  const label = holder.querySelector(".scene-hover");
  const ray = new Raycaster();
  const pointer = new Vector2();
  let pending = false;
  canvas.addEventListener("pointermove", (event) => {
    if (pending || !label) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const box = canvas.getBoundingClientRect();
      pointer.set(((event.clientX - box.left) / box.width) * 2 - 1, -((event.clientY - box.top) / box.height) * 2 + 1);
      ray.setFromCamera(pointer, camera);
      const hit = ray.intersectObject(root, true).find((found) => found.object.visible && visibleChain(found.object));
      label.textContent = hit ? objectName(hit.object) : "";
    });
  });
}

function visibleChain(node) {
  for (let current = node; current; current = current.parent) if (!current.visible) return false;
  return true;
}

function objectName(node) {
  // three names a mesh after its glTF node, with dots and spaces taken out; the name as
  // written is kept in userData. A node of several primitives becomes a group of meshes.
  for (const candidate of [node, node.parent]) {
    if (candidate && (candidate.userData.name || candidate.name)) return candidate.userData.name || candidate.name;
  }
  return "";
}

function show(holder) {
  const canvas = holder.querySelector("canvas");
  const url = holder.dataset.model;
  let renderer;
  try {
    renderer = new WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  } catch (error) {
    say(holder, "WebGL is not available in this browser");
    return;
  }
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  const scene = new Scene();
  scene.background = new Color(0x20242c);
  scene.add(new HemisphereLight(0xdde6ff, 0x302820, 1.1));
  scene.add(new AmbientLight(0xffffff, 0.3));
  const camera = new PerspectiveCamera(45, 1, 0.1, 1000);
  // A light that moves with the camera, from above its right shoulder: whatever side of a
  // face is seen (both are drawn) is lit.
  const headlight = new DirectionalLight(0xffffff, 1.8);
  headlight.position.set(1, 1.5, 0.5);
  headlight.target.position.set(0, 0, -1);
  camera.add(headlight, headlight.target);
  scene.add(camera);
  const sun = new DirectionalLight(0xffffff, 0.6);
  sun.position.set(3, 5, 4);
  scene.add(sun);
  const controls = new OrbitControls(camera, canvas);
  controls.enableDamping = true;

  function resize() {
    const width = canvas.clientWidth || 640;
    const height = canvas.clientHeight || 480;
    renderer.setSize(width, height, false);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
  }
  resize();
  window.addEventListener("resize", resize);

  function draw() {
    controls.update();
    renderer.render(scene, camera);
    requestAnimationFrame(draw);
  }

  say(holder, "loading");
  new GLTFLoader().load(
    url,
    (gltf) => {
      gltf.scene.traverse((node) => {
        if (!node.isMesh) return;
        faceNormalsOutward(node.geometry);
        if (!(node.material && node.material.map)) {
          // Textures live in other files of the pack: shade the bare surface so its shape
          // shows. JOE models say nothing of sides, and games wind faces either way (VDrift's
          // cars clockwise): both sides are drawn.
          node.material = new MeshStandardMaterial({ color: 0xc8b89a, roughness: 0.7, metalness: 0.05, side: DoubleSide });
        }
      });
      scene.add(gltf.scene);
      gltf.scene.updateMatrixWorld(true);
      resize();
      // A scene is framed on what it shows, not its skybox (a box around the whole world).
      const skybox = holder.dataset.scene ? gltf.scene.getObjectByName("skybox") : null;
      const skyboxParent = skybox ? skybox.parent : null;
      if (skybox) skyboxParent.remove(skybox);
      frame(camera, controls, gltf.scene);
      if (skybox) {
        skyboxParent.add(skybox);
        camera.far = Math.max(camera.far, new Box3().setFromObject(skybox).getSize(new Vector3()).length() * 2);
        camera.updateProjectionMatrix();
      }
      if (holder.dataset.scene) sceneControls(holder, gltf.scene, canvas, camera);
      renderer.render(scene, camera);
      draw();
      say(holder, "shown");
    },
    undefined,
    () => say(holder, "the model could not be shown"),
  );
}

for (const holder of document.querySelectorAll("[data-model]")) {
  show(holder);
}
