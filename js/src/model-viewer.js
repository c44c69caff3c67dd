// The model preview of `gamepak serve`: a glTF binary (the server converts JOE models) shown
// with orbit and zoom. Bundled with three.js by esbuild into src/gamepak/web/static/, so the
// page loads it from the server itself (the Content-Security-Policy allows nothing else).
import {
  AmbientLight,
  Box3,
  Color,
  DirectionalLight,
  HemisphereLight,
  MeshStandardMaterial,
  PerspectiveCamera,
  Scene,
  Vector3,
  WebGLRenderer,
} from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";

function say(holder, text) {
  const status = holder.querySelector(".model-status");
  if (status) status.textContent = text;
  holder.dataset.state = text;
}

function frame(camera, controls, object) {
  // Put the whole model in view, whatever its units: games' models range from centimetres to
  // kilometres.
  const box = new Box3().setFromObject(object);
  const size = box.getSize(new Vector3()).length() || 1;
  const centre = box.getCenter(new Vector3());
  camera.near = size / 1000;
  camera.far = size * 100;
  camera.position.copy(centre).add(new Vector3(0.9, 0.7, 1.2).multiplyScalar(size));
  camera.updateProjectionMatrix();
  controls.target.copy(centre);
  controls.update();
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
  scene.add(new HemisphereLight(0xdde6ff, 0x302820, 1.2));
  scene.add(new AmbientLight(0xffffff, 0.25));
  const sun = new DirectionalLight(0xffffff, 2.2);
  sun.position.set(3, 5, 4);
  scene.add(sun);
  const camera = new PerspectiveCamera(45, 1, 0.1, 1000);
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
      // Textures live in other files of the pack: shade the bare surface so its shape shows.
      gltf.scene.traverse((node) => {
        if (node.isMesh && !(node.material && node.material.map)) {
          node.material = new MeshStandardMaterial({ color: 0xc8b89a, roughness: 0.65, metalness: 0.05 });
        }
      });
      scene.add(gltf.scene);
      frame(camera, controls, gltf.scene);
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
